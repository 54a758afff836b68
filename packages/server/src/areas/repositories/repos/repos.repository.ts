import { sql } from "kysely";
import { cachedRead } from "../../../db/cached-read.js";
import type { DbOrTx } from "../../../db/database.js";
import type { RepositoryRow } from "../../../db/schema.js";

/** SQL for repositories and the namespaces (users and organizations) that own them. */
export const reposRepository = {
  insert: (db: DbOrTx, row: RepositoryRow) => db.insertInto("repositories").values(row).execute(),

  /** Cached until repositories change: every request to a repository asks. */
  find: cachedRead("repository", (db: DbOrTx, ownerId: string, type: string, name: string) =>
    db
      .selectFrom("repositories")
      .selectAll()
      .where("owner_id", "=", ownerId)
      .where("type", "=", type)
      .where("name", "=", name)
      .executeTakeFirst(),
  ),

  touch: (db: DbOrTx, id: string, at: string) =>
    db.updateTable("repositories").set({ updated_at: at }).where("id", "=", id).execute(),

  findById: cachedRead("repository by id", (db: DbOrTx, id: string) =>
    db.selectFrom("repositories").selectAll().where("id", "=", id).executeTakeFirst(),
  ),

  /** The handle of a repository's owner, whichever kind of namespace it is. */
  async ownerHandle(db: DbOrTx, ownerType: string, ownerId: string) {
    const table = ownerType === "org" ? "organizations" : "users";
    return (
      (await db.selectFrom(table).select("handle").where("id", "=", ownerId).executeTakeFirst())?.handle ??
      null
    );
  },

  /**
   * A page of repositories of a kind that the caller can possibly see (public,
   * its own, or its organizations'), with their owners' handles. The caller's
   * credential may narrow this further; the service asks the authorization rules per row.
   */
  listVisible(
    db: DbOrTx,
    query: {
      type: string;
      viewerIds: string[];
      author?: string;
      search?: string;
      gated?: boolean;
      sort: "updated_at" | "created_at" | "full_name";
      descending: boolean;
      offset: number;
      limit: number;
    },
  ) {
    const ownerHandle = sql<string>`coalesce(users.handle, organizations.handle)`;
    const fullName = sql<string>`coalesce(users.handle, organizations.handle) || '/' || repositories.name`;
    let select = db
      .selectFrom("repositories")
      .leftJoin("users", "users.id", "repositories.owner_id")
      .leftJoin("organizations", "organizations.id", "repositories.owner_id")
      .selectAll("repositories")
      .select(ownerHandle.as("owner_handle"))
      .where("repositories.type", "=", query.type)
      .where((eb) =>
        query.viewerIds.length > 0
          ? eb.or([eb("repositories.private", "=", 0), eb("repositories.owner_id", "in", query.viewerIds)])
          : eb("repositories.private", "=", 0),
      );
    if (query.author) select = select.where(ownerHandle, "=", query.author);
    if (query.gated !== undefined) {
      select = select.where("repositories.gated", query.gated ? "is not" : "is", null);
    }
    if (query.search) {
      const pattern = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      select = select.where(sql<boolean>`${fullName} like ${pattern} escape '\\'`);
    }
    const order = query.sort === "full_name" ? fullName : sql.ref(`repositories.${query.sort}`);
    return select
      .orderBy(order, query.descending ? "desc" : "asc")
      .orderBy("repositories.id")
      .offset(query.offset)
      .limit(query.limit)
      .execute();
  },

  setPrivate: (db: DbOrTx, id: string, isPrivate: boolean, at: string) =>
    db
      .updateTable("repositories")
      .set({ private: isPrivate ? 1 : 0, updated_at: at })
      .where("id", "=", id)
      .execute(),

  setXetEnabled: (db: DbOrTx, id: string, enabled: boolean, at: string) =>
    db
      .updateTable("repositories")
      .set({ xet_enabled: enabled ? 1 : 0, updated_at: at })
      .where("id", "=", id)
      .execute(),

  setGated: (db: DbOrTx, id: string, mode: string | null, at: string) =>
    db.updateTable("repositories").set({ gated: mode, updated_at: at }).where("id", "=", id).execute(),

  move: (db: DbOrTx, id: string, owner: { type: string; id: string }, name: string, at: string) =>
    db
      .updateTable("repositories")
      .set({ owner_type: owner.type, owner_id: owner.id, name, updated_at: at })
      .where("id", "=", id)
      .execute(),

  /** The repository an old name now points to, if it was moved away from that name. */
  redirectTarget: async (db: DbOrTx, type: string, ownerHandle: string, name: string) =>
    (
      await db
        .selectFrom("repo_redirects")
        .select("repository_id")
        .where("type", "=", type)
        .where("owner_handle", "=", ownerHandle)
        .where("name", "=", name)
        .executeTakeFirst()
    )?.repository_id ?? null,

  /** Records the old name of a moved repository. */
  async addRedirect(
    db: DbOrTx,
    row: { type: string; owner_handle: string; name: string; repository_id: string; created_at: string },
  ) {
    await db
      .insertInto("repo_redirects")
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(["type", "owner_handle", "name"])
          .doUpdateSet({ repository_id: row.repository_id, created_at: row.created_at }),
      )
      .execute();
  },

  /** A name taken by a repository stops redirecting elsewhere. */
  dropRedirect: (db: DbOrTx, type: string, ownerHandle: string, name: string) =>
    db
      .deleteFrom("repo_redirects")
      .where("type", "=", type)
      .where("owner_handle", "=", ownerHandle)
      .where("name", "=", name)
      .execute(),

  delete: (db: DbOrTx, id: string) => db.deleteFrom("repositories").where("id", "=", id).execute(),

  /** The user or organization a handle names; cached until accounts or organizations change. */
  findOwner: cachedRead("owner by handle", async (db: DbOrTx, handle: string) => {
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
  }),
};
