import type { DbOrTx } from "../../db/database.js";
import type { RepositoryRow } from "../../db/schema.js";

/** SQL for repositories and the namespaces (users and organizations) that own them. */
export const reposRepository = {
  insert: (db: DbOrTx, row: RepositoryRow) => db.insertInto("repositories").values(row).execute(),

  find: (db: DbOrTx, ownerId: string, type: string, name: string) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("type", "=", type)
      .where("name", "=", name)
      .executeTakeFirst(),

  touch: (db: DbOrTx, id: string, at: string) =>
    db.updateTable("repositories").set({ updated_at: at }).where("id", "=", id).execute(),

  findById: (db: DbOrTx, id: string) =>
    db.selectFrom("repositories").selectAll().where("id", "=", id).executeTakeFirst(),

  /** The handle of a repository's owner, whichever kind of namespace it is. */
  async ownerHandle(db: DbOrTx, ownerType: string, ownerId: string) {
    const table = ownerType === "org" ? "organizations" : "users";
    return (
      (await db.selectFrom(table).select("handle").where("id", "=", ownerId).executeTakeFirst())?.handle ??
      null
    );
  },

  delete: (db: DbOrTx, id: string) => db.deleteFrom("repositories").where("id", "=", id).execute(),

  /** The user or organization a handle names. */
  async findOwner(db: DbOrTx, handle: string) {
    const user = await db
      .selectFrom("users")
      .select(["id", "handle"])
      .where("handle", "=", handle)
      .executeTakeFirst();
    if (user) return { type: "user" as const, id: user.id, handle: user.handle };
    const org = await db
      .selectFrom("organizations")
      .select(["id", "handle"])
      .where("handle", "=", handle)
      .executeTakeFirst();
    return org ? { type: "org" as const, id: org.id, handle: org.handle } : null;
  },
};
