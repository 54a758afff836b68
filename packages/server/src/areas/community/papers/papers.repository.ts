import { sql } from "kysely";
import type { DbOrTx } from "../../../db/database.js";
import type { PaperClaimRow, PaperRow, PaperSubmissionRow } from "../../../db/schema.js";

/** SQL for paper records, submissions, authorship claims and card citations. */
export const papersRepository = {
  find: (db: DbOrTx, arxivId: string) =>
    db.selectFrom("papers").selectAll().where("arxiv_id", "=", arxivId).executeTakeFirst(),

  /** Papers whose id, title or authors hold the text (case-insensitive), newest first. */
  search: (db: DbOrTx, text: string, limit: number) => {
    const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return db
      .selectFrom("papers")
      .selectAll()
      .where((eb) =>
        eb.or([
          eb(sql<string>`lower(arxiv_id)`, "like", sql<string>`${pattern} escape '\\'`),
          eb(sql<string>`lower(title)`, "like", sql<string>`${pattern} escape '\\'`),
          eb(sql<string>`lower(authors)`, "like", sql<string>`${pattern} escape '\\'`),
        ]),
      )
      .orderBy("created_at", "desc")
      .orderBy("arxiv_id")
      .limit(limit)
      .execute();
  },

  findMany: async (db: DbOrTx, arxivIds: string[]) =>
    arxivIds.length === 0
      ? []
      : db.selectFrom("papers").selectAll().where("arxiv_id", "in", arxivIds).execute(),

  /** Records the paper unless it already is (another request may have just done so). */
  insertIfAbsent: (db: DbOrTx, row: PaperRow) =>
    db
      .insertInto("papers")
      .values(row)
      .onConflict((oc) => oc.column("arxiv_id").doNothing())
      .execute(),

  update: (db: DbOrTx, arxivId: string, fields: Partial<Omit<PaperRow, "arxiv_id" | "created_at">>) =>
    db.updateTable("papers").set(fields).where("arxiv_id", "=", arxivId).execute(),

  /** Removes the record when neither a submission nor a claim refers to it any more. */
  deleteIfUnreferenced: (db: DbOrTx, arxivId: string) =>
    db
      .deleteFrom("papers")
      .where("arxiv_id", "=", arxivId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("paper_claims")
              .select("id")
              .where("paper_claims.arxiv_id", "=", arxivId)
              .union(
                selectFrom("paper_submissions")
                  .select("id")
                  .where("paper_submissions.arxiv_id", "=", arxivId),
              ),
          ),
        ),
      )
      .execute(),

  /** The paper's submission with its submitter, if it was submitted. */
  submissionOf: (db: DbOrTx, arxivId: string) =>
    db
      .selectFrom("paper_submissions")
      .innerJoin("users", "users.id", "paper_submissions.user_id")
      .leftJoin("user_profiles", "user_profiles.user_id", "users.id")
      .select([
        "paper_submissions.id",
        "paper_submissions.user_id",
        "paper_submissions.created_at",
        "users.handle",
        "users.fullname",
        "user_profiles.avatar_sha256",
      ])
      .where("paper_submissions.arxiv_id", "=", arxivId)
      .executeTakeFirst(),

  /** Submissions to the papers page, newest first, with their paper and submitter; `from`/`to` bound the submission time. */
  dailySubmissions: (
    db: DbOrTx,
    filter: { from?: string; to?: string; submitter?: string; offset: number; limit: number },
  ) => {
    let query = db
      .selectFrom("paper_submissions")
      .innerJoin("papers", "papers.arxiv_id", "paper_submissions.arxiv_id")
      .innerJoin("users", "users.id", "paper_submissions.user_id")
      .leftJoin("user_profiles", "user_profiles.user_id", "users.id")
      .selectAll("papers")
      .select([
        "paper_submissions.created_at as submitted_at",
        "users.handle",
        "users.fullname as submitter_fullname",
        "user_profiles.avatar_sha256",
      ]);
    if (filter.from !== undefined) query = query.where("paper_submissions.created_at", ">=", filter.from);
    if (filter.to !== undefined) query = query.where("paper_submissions.created_at", "<", filter.to);
    if (filter.submitter !== undefined) query = query.where("users.handle", "=", filter.submitter);
    return query
      .orderBy("paper_submissions.created_at", "desc")
      .orderBy("paper_submissions.id")
      .offset(filter.offset)
      .limit(filter.limit)
      .execute();
  },

  submissionsOf: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("paper_submissions")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("created_at", "desc")
      .orderBy("id")
      .execute(),

  insertSubmission: (db: DbOrTx, row: PaperSubmissionRow) =>
    db.insertInto("paper_submissions").values(row).execute(),

  findSubmission: (db: DbOrTx, userId: string, id: string) =>
    db
      .selectFrom("paper_submissions")
      .selectAll()
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .executeTakeFirst(),

  deleteSubmission: (db: DbOrTx, id: string) =>
    db.deleteFrom("paper_submissions").where("id", "=", id).execute(),

  claimsOf: (db: DbOrTx, userId: string, onlyVisible = false) => {
    let query = db.selectFrom("paper_claims").selectAll().where("user_id", "=", userId);
    if (onlyVisible) query = query.where("visible", "=", 1);
    return query.orderBy("created_at", "desc").orderBy("id").execute();
  },

  findClaim: (db: DbOrTx, userId: string, id: string) =>
    db
      .selectFrom("paper_claims")
      .selectAll()
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .executeTakeFirst(),

  /** The claim of the account on the paper, or the claim of the author name on it. */
  conflictingClaim: (db: DbOrTx, userId: string, arxivId: string, authorName: string) =>
    db
      .selectFrom("paper_claims")
      .selectAll()
      .where("arxiv_id", "=", arxivId)
      .where((eb) => eb.or([eb("user_id", "=", userId), eb("author_name", "=", authorName)]))
      .orderBy("created_at")
      .executeTakeFirst(),

  insertClaim: (db: DbOrTx, row: PaperClaimRow) => db.insertInto("paper_claims").values(row).execute(),

  setClaimVisible: (db: DbOrTx, id: string, visible: boolean, at: string) =>
    db
      .updateTable("paper_claims")
      .set({ visible: visible ? 1 : 0, updated_at: at })
      .where("id", "=", id)
      .execute(),

  deleteClaim: (db: DbOrTx, id: string) => db.deleteFrom("paper_claims").where("id", "=", id).execute(),

  /** Every claim on the papers, oldest first. */
  claimsOn: async (db: DbOrTx, arxivIds: string[]) =>
    arxivIds.length === 0
      ? []
      : db
          .selectFrom("paper_claims")
          .selectAll()
          .where("arxiv_id", "in", arxivIds)
          .orderBy("created_at")
          .execute(),

  /** The visible claims on the papers, with what shows of the accounts that made them. */
  visibleAuthors: async (db: DbOrTx, arxivIds: string[]) =>
    arxivIds.length === 0
      ? []
      : db
          .selectFrom("paper_claims")
          .innerJoin("users", "users.id", "paper_claims.user_id")
          .leftJoin("user_profiles", "user_profiles.user_id", "users.id")
          .select([
            "paper_claims.arxiv_id",
            "paper_claims.author_name",
            "users.handle",
            "users.fullname",
            "user_profiles.avatar_sha256",
          ])
          .where("paper_claims.arxiv_id", "in", arxivIds)
          .where("paper_claims.visible", "=", 1)
          .execute(),

  /** The papers a repository's card cites. */
  citationsOf: async (db: DbOrTx, repositoryId: string) =>
    (
      await db
        .selectFrom("paper_citations")
        .select("arxiv_id")
        .where("repository_id", "=", repositoryId)
        .execute()
    ).map((row) => row.arxiv_id),

  addCitations: async (db: DbOrTx, repositoryId: string, arxivIds: string[], at: string) => {
    if (arxivIds.length === 0) return;
    await db
      .insertInto("paper_citations")
      .values(arxivIds.map((arxiv_id) => ({ arxiv_id, repository_id: repositoryId, created_at: at })))
      .onConflict((oc) => oc.columns(["arxiv_id", "repository_id"]).doNothing())
      .execute();
  },

  removeCitations: async (db: DbOrTx, repositoryId: string, arxivIds: string[]) => {
    if (arxivIds.length === 0) return;
    await db
      .deleteFrom("paper_citations")
      .where("repository_id", "=", repositoryId)
      .where("arxiv_id", "in", arxivIds)
      .execute();
  },

  /** The ids of the repositories whose cards cite the paper, most recently changed first. */
  citingRepositories: async (db: DbOrTx, arxivId: string) =>
    (
      await db
        .selectFrom("paper_citations")
        .innerJoin("repositories", "repositories.id", "paper_citations.repository_id")
        .select("repositories.id")
        .where("paper_citations.arxiv_id", "=", arxivId)
        .orderBy("repositories.updated_at", "desc")
        .orderBy("repositories.id")
        .execute()
    ).map((row) => row.id),
};
