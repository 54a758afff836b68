import type { DbOrTx } from "../../../db/database.js";
import type { OrganizationSsoRow, SsoAuthorizationRow, SsoLoginRow } from "../../../db/schema.js";

/** SQL for organizations' single sign-on, members' SSO sign-ins, and sign-ins under way. */
export const ssoRepository = {
  find: (db: DbOrTx, organizationId: string) =>
    db
      .selectFrom("organization_sso")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .executeTakeFirst(),

  async save(db: DbOrTx, row: OrganizationSsoRow) {
    const { organization_id: _key, ...rest } = row;
    await db
      .insertInto("organization_sso")
      .values(row)
      .onConflict((oc) => oc.column("organization_id").doUpdateSet(rest))
      .execute();
  },

  remove: (db: DbOrTx, organizationId: string) =>
    db.deleteFrom("organization_sso").where("organization_id", "=", organizationId).execute(),

  /** Forgets every sign-in with the organization's provider, made or under way. */
  async forgetSignIns(db: DbOrTx, organizationId: string) {
    await db.deleteFrom("sso_authorizations").where("organization_id", "=", organizationId).execute();
    await db.deleteFrom("sso_logins").where("organization_id", "=", organizationId).execute();
  },

  /** Forgets a member's sign-ins, made or under way: one who leaves and comes back signs in again. */
  async forgetMember(db: DbOrTx, organizationId: string, userId: string) {
    for (const table of ["sso_authorizations", "sso_logins"] as const) {
      await db
        .deleteFrom(table)
        .where("organization_id", "=", organizationId)
        .where("user_id", "=", userId)
        .execute();
    }
  },

  /** The organizations of the user that require SSO, with the user's sign-in expiry (null if none), by handle. */
  requiredOfUser: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("memberships")
      .innerJoin("organizations", "organizations.id", "memberships.organization_id")
      .innerJoin("organization_sso", "organization_sso.organization_id", "memberships.organization_id")
      .leftJoin("sso_authorizations", (join) =>
        join
          .onRef("sso_authorizations.organization_id", "=", "memberships.organization_id")
          .onRef("sso_authorizations.user_id", "=", "memberships.user_id"),
      )
      .select([
        "organizations.id",
        "organizations.handle",
        "organizations.fullname",
        "organization_sso.required",
        "sso_authorizations.expires_at",
      ])
      .where("memberships.user_id", "=", userId)
      .where("organization_sso.required", "=", 1)
      .orderBy("organizations.handle")
      .execute(),

  startLogin: (db: DbOrTx, row: SsoLoginRow) => db.insertInto("sso_logins").values(row).execute(),

  pruneLogins: (db: DbOrTx, now: string) =>
    db.deleteFrom("sso_logins").where("expires_at", "<=", now).execute(),

  /**
   * Claims the sign-in under way with this state, started by this account for
   * this organization: it is deleted as it is read, so a state works once.
   */
  async takeLogin(db: DbOrTx, stateHash: string, organizationId: string, userId: string) {
    const row = await db
      .selectFrom("sso_logins")
      .selectAll()
      .where("state_hash", "=", stateHash)
      .where("organization_id", "=", organizationId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (!row) return undefined;
    const taken = await db.deleteFrom("sso_logins").where("state_hash", "=", stateHash).executeTakeFirst();
    return Number(taken.numDeletedRows) === 1 ? row : undefined;
  },

  /** The sign-ins of the organization made by this account or with this provider subject. */
  linkedIdentities(db: DbOrTx, organizationId: string, userId: string, subject: string) {
    return db
      .selectFrom("sso_authorizations")
      .select(["user_id", "subject"])
      .where("organization_id", "=", organizationId)
      .where((w) => w.or([w("user_id", "=", userId), w("subject", "=", subject)]))
      .execute();
  },

  async saveAuthorization(db: DbOrTx, row: SsoAuthorizationRow) {
    const { organization_id: _org, user_id: _user, ...rest } = row;
    await db
      .insertInto("sso_authorizations")
      .values(row)
      .onConflict((oc) => oc.columns(["organization_id", "user_id"]).doUpdateSet(rest))
      .execute();
  },
};
