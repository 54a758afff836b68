import type { Kysely, Migration } from "kysely";

/**
 * Papers: the record of an arXiv paper (metadata given by its submitter or
 * first claimant), submissions to the papers page (one per paper), authorship
 * claims (one per account and paper, one per author name), and the
 * repositories whose cards cite a paper. Citations are kept by arXiv id
 * without a reference to the record, so they exist before and after it.
 */
export const papers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("papers")
      .addColumn("arxiv_id", "text", (c) => c.primaryKey())
      .addColumn("version", "integer")
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("authors", "text", (c) => c.notNull())
      .addColumn("summary", "text", (c) => c.notNull())
      .addColumn("published_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("paper_submissions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("arxiv_id", "text", (c) => c.notNull().references("papers.arxiv_id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("paper_submissions_paper_uq", ["arxiv_id"])
      .execute();
    await db.schema
      .createIndex("paper_submissions_user_idx")
      .on("paper_submissions")
      .column("user_id")
      .execute();
    await db.schema
      .createTable("paper_claims")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("arxiv_id", "text", (c) => c.notNull().references("papers.arxiv_id").onDelete("cascade"))
      .addColumn("author_name", "text", (c) => c.notNull())
      .addColumn("visible", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addUniqueConstraint("paper_claims_user_uq", ["user_id", "arxiv_id"])
      .addUniqueConstraint("paper_claims_author_uq", ["arxiv_id", "author_name"])
      .execute();
    await db.schema
      .createTable("paper_citations")
      .addColumn("arxiv_id", "text", (c) => c.notNull())
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("paper_citations_pk", ["arxiv_id", "repository_id"])
      .execute();
    await db.schema
      .createIndex("paper_citations_repository_idx")
      .on("paper_citations")
      .column("repository_id")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("paper_citations").execute();
    await db.schema.dropTable("paper_claims").execute();
    await db.schema.dropTable("paper_submissions").execute();
    await db.schema.dropTable("papers").execute();
  },
};
