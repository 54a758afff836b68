import type { Kysely, Migration } from "kysely";

/**
 * Organization single sign-on: each organization's OpenID Connect provider
 * (client secret sealed) and whether it is required; the SSO sign-ins members
 * made (one per member, until it expires); and the sign-ins under way, keyed
 * by the hash of their `state`, with the nonce's hash and the sealed PKCE
 * verifier, each bound to the account that started it.
 */
export const organizationSso: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("organization_sso")
      .addColumn("organization_id", "text", (c) =>
        c.primaryKey().references("organizations.id").onDelete("cascade"),
      )
      .addColumn("issuer", "text", (c) => c.notNull())
      .addColumn("client_id", "text", (c) => c.notNull())
      .addColumn("sealed_client_secret", "text", (c) => c.notNull())
      .addColumn("email_domain", "text")
      .addColumn("required", "integer", (c) => c.notNull())
      .addColumn("session_seconds", "integer")
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("sso_authorizations")
      .addColumn("organization_id", "text", (c) =>
        c.notNull().references("organizations.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("email", "text")
      .addColumn("signed_in_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("sso_authorizations_pk", ["organization_id", "user_id"])
      .execute();
    // One provider account vouches for one hub account per organization.
    await db.schema
      .createIndex("sso_authorizations_subject_idx")
      .on("sso_authorizations")
      .columns(["organization_id", "subject"])
      .unique()
      .execute();
    await db.schema
      .createIndex("sso_authorizations_user_idx")
      .on("sso_authorizations")
      .column("user_id")
      .execute();
    await db.schema
      .createTable("sso_logins")
      .addColumn("state_hash", "text", (c) => c.primaryKey())
      .addColumn("organization_id", "text", (c) =>
        c.notNull().references("organizations.id").onDelete("cascade"),
      )
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("nonce_hash", "text", (c) => c.notNull())
      .addColumn("sealed_code_verifier", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("sso_logins_expires_idx").on("sso_logins").column("expires_at").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable("sso_logins").execute();
    await db.schema.dropTable("sso_authorizations").execute();
    await db.schema.dropTable("organization_sso").execute();
  },
};
