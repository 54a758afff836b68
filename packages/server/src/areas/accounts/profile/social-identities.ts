import { SOCIAL_PROVIDERS, type SocialIdentity, type SocialProvider } from "@hub/api";
import type { Db, DbOrTx } from "../../../db/database.js";
import type { SocialIdentityRow } from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import { usersRepository } from "../account/users.repository.js";

const EXTERNAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$/;

/** SQL for linked identities; every function takes the database or a transaction first. */
export const socialIdentitiesRepository = {
  list: (db: DbOrTx, userId: string) =>
    db
      .selectFrom("social_identities")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("provider")
      .execute(),

  find: (db: DbOrTx, provider: string, externalName: string) =>
    db
      .selectFrom("social_identities")
      .selectAll()
      .where("provider", "=", provider)
      .where("external_name", "=", externalName)
      .executeTakeFirst(),

  async upsert(db: DbOrTx, row: SocialIdentityRow) {
    await db
      .insertInto("social_identities")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["user_id", "provider"]).doUpdateSet({
          external_name: row.external_name,
          visible: row.visible,
          linked_at: row.linked_at,
        }),
      )
      .execute();
  },

  setVisible: (db: DbOrTx, userId: string, provider: string, visible: boolean) =>
    db
      .updateTable("social_identities")
      .set({ visible: visible ? 1 : 0 })
      .where("user_id", "=", userId)
      .where("provider", "=", provider)
      .executeTakeFirst(),

  remove: (db: DbOrTx, userId: string, provider: string) =>
    db
      .deleteFrom("social_identities")
      .where("user_id", "=", userId)
      .where("provider", "=", provider)
      .executeTakeFirst(),
};

const isProvider = (provider: string): provider is SocialProvider =>
  Object.hasOwn(SOCIAL_PROVIDERS, provider);

function present(row: SocialIdentityRow): SocialIdentity {
  const template = isProvider(row.provider) ? SOCIAL_PROVIDERS[row.provider] : null;
  return {
    provider: row.provider,
    name: row.external_name,
    url: template ? template.replace("{name}", encodeURIComponent(row.external_name)) : null,
    visible: row.visible === 1,
    linkedAt: row.linked_at,
  };
}

/**
 * Identities at other providers linked to accounts. The operator links them
 * (`hubd identity link`) until external sign-in exists; the account decides
 * which ones its public profile shows.
 */
export function createSocialIdentities({ db, clock }: { db: Db; clock: () => Date }) {
  async function userOf(handle: string) {
    const user = await usersRepository.findByHandle(db, handle);
    if (!user) throw notFound(`No user is called "${handle}".`);
    return user;
  }

  return {
    /** Every identity linked to the account. */
    async list(userId: string): Promise<SocialIdentity[]> {
      return (await socialIdentitiesRepository.list(db, userId)).map(present);
    },

    /** The identities the account shows on its public profile. */
    async visible(userId: string) {
      return (await this.list(userId))
        .filter((identity) => identity.visible)
        .map(({ provider, name, url }) => ({ provider, name, url }));
    },

    /** Shows or hides a linked identity on the public profile; 404 when none is linked for the provider. */
    async setVisibility(userId: string, provider: string, visible: boolean): Promise<SocialIdentity> {
      const updated = await socialIdentitiesRepository.setVisible(db, userId, provider, visible);
      if (Number(updated.numUpdatedRows) === 0) {
        throw notFound(
          `No ${provider} identity is linked to your account; see socialIdentities in GET /api/me.`,
        );
      }
      const row = (await socialIdentitiesRepository.list(db, userId)).find((r) => r.provider === provider);
      if (!row) throw notFound(`No ${provider} identity is linked to your account.`);
      return present(row);
    },

    /** Links (or re-links) the account's identity at a provider; an identity belongs to one account only. */
    async link(
      handle: string,
      provider: string,
      externalName: string,
      visible: boolean,
    ): Promise<SocialIdentity> {
      if (!isProvider(provider)) {
        throw badRequest(
          "unknown_provider",
          `"${provider}" is not a provider the hub knows; use one of ${Object.keys(SOCIAL_PROVIDERS).join(", ")}.`,
          "provider",
        );
      }
      if (!EXTERNAL_NAME.test(externalName)) {
        throw badRequest(
          "invalid_external_name",
          `"${externalName}" is not a name at ${provider}: use up to 100 letters, digits and . _ @ + -.`,
          "external_name",
        );
      }
      const user = await userOf(handle);
      const holder = await socialIdentitiesRepository.find(db, provider, externalName);
      if (holder && holder.user_id !== user.id) {
        throw conflict(
          "identity_taken",
          `The ${provider} identity ${externalName} is linked to another account.`,
        );
      }
      const row: SocialIdentityRow = {
        user_id: user.id,
        provider,
        external_name: externalName,
        visible: visible ? 1 : 0,
        linked_at: clock().toISOString(),
      };
      await socialIdentitiesRepository.upsert(db, row);
      return present(row);
    },

    /** Unlinks the account's identity at a provider. */
    async unlink(handle: string, provider: string): Promise<void> {
      const user = await userOf(handle);
      const removed = await socialIdentitiesRepository.remove(db, user.id, provider);
      if (Number(removed.numDeletedRows) === 0)
        throw notFound(`${handle} has no ${provider} identity linked.`);
    },
  };
}

export type SocialIdentities = ReturnType<typeof createSocialIdentities>;
