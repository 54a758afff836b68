import type { Kysely, Migration } from "kysely";

/**
 * Discussions and pull requests (numbered per repository in one sequence),
 * their timeline of events, reactions on comments, and each account's
 * notifications and repository watches. An author's rows outlive the
 * account (author set to null: the clients show "deleted"); an account's
 * notifications and watches go with it.
 */
export const discussions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("discussions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("num", "integer", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("author_id", "text", (c) => c.references("users.id").onDelete("set null"))
      .addColumn("is_pull_request", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("target_branch", "text")
      .addColumn("merge_commit", "text")
      .addColumn("pinned", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addUniqueConstraint("discussions_repository_num_unique", ["repository_id", "num"])
      .execute();
    await db.schema
      .createTable("discussion_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("discussion_id", "text", (c) => c.notNull().references("discussions.id").onDelete("cascade"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("author_id", "text", (c) => c.references("users.id").onDelete("set null"))
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addUniqueConstraint("discussion_events_seq_unique", ["discussion_id", "seq"])
      .execute();
    await db.schema
      .createTable("discussion_reactions")
      .addColumn("event_id", "text", (c) =>
        c.notNull().references("discussion_events.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("reaction", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("discussion_reactions_pk", ["event_id", "user_id", "reaction"])
      .execute();
    await db.schema
      .createTable("notifications")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("discussion_id", "text", (c) => c.notNull().references("discussions.id").onDelete("cascade"))
      .addColumn("event_id", "text", (c) => c.references("discussion_events.id").onDelete("cascade"))
      .addColumn("reason", "text", (c) => c.notNull())
      .addColumn("activity", "text", (c) => c.notNull())
      .addColumn("actor_id", "text", (c) => c.references("users.id").onDelete("set null"))
      .addColumn("read_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("notifications_user_idx")
      .on("notifications")
      .columns(["user_id", "created_at"])
      .execute();
    // Deleting a discussion (with its repository) removes its notifications: found by index, not by a scan.
    await db.schema
      .createIndex("notifications_discussion_idx")
      .on("notifications")
      .column("discussion_id")
      .execute();
    await db.schema.createIndex("notifications_event_idx").on("notifications").column("event_id").execute();
    await db.schema
      .createTable("repo_watches")
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("repository_id", "text", (c) =>
        c.notNull().references("repositories.id").onDelete("cascade"),
      )
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("repo_watches_pk", ["user_id", "repository_id"])
      .execute();
    // Every discussion activity reads its repository's watchers.
    await db.schema
      .createIndex("repo_watches_repository_idx")
      .on("repo_watches")
      .column("repository_id")
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of [
      "repo_watches",
      "notifications",
      "discussion_reactions",
      "discussion_events",
      "discussions",
    ])
      await db.schema.dropTable(table).execute();
  },
};
