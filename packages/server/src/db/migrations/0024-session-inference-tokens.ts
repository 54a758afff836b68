import type { Kysely, Migration } from "kysely";
import { noteChangesOn } from "./0023-change-notes.js";

/**
 * Short-lived Router credentials a browser session mints for the web's
 * playground (`POST /api/auth/session-inference-token`): only the digest of the
 * secret is kept, and each row belongs to its session, so ending the session
 * (sign-out, expiry clean-up, account deletion) deletes them with it. The Router
 * reads them through the cache, so changes are noted like the sessions'.
 */
export const sessionInferenceTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("session_inference_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull().references("sessions.id").onDelete("cascade"))
      .addColumn("secret_hash", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("session_inference_tokens_session_idx")
      .on("session_inference_tokens")
      .column("session_id")
      .execute();
    await noteChangesOn(db, "session_inference_tokens");
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("session_inference_tokens").execute();
  },
};
