import { randomUUID } from "node:crypto";
import type { AccountDeletion, AccountDeletionBlocker, AccountDeletionPreview, RepoType } from "@hub/api";
import type { Logger } from "pino";
import { awaitsReauthentication } from "../../../auth/authorize.js";
import type { Principal } from "../../../auth/credential.js";
import type { DatabaseConfig } from "../../../config.js";
import type { Db, DbOrTx } from "../../../db/database.js";
import { foreignKeysTo } from "../../../db/foreign-keys.js";
import type { RepositoryRow, UserRow } from "../../../db/schema.js";
import { HubError, badRequest, notFound } from "../../../errors.js";
import { removeUnheldObjects } from "../../../git/lfs/unheld-objects.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import type { RepoStorage } from "../../../git/repo-storage.js";
import { usersRepository } from "../account/users.repository.js";
import { contentPreferencesRepository } from "../content-preferences/content-preferences.repository.js";
import { inferenceRepository } from "../../inference/settings/inference.repository.js";
import { toUsd, type InferenceService } from "../../inference/settings/inference.service.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import { profileRepository } from "../profile/profile.repository.js";
import type { ProfileService } from "../profile/profile.service.js";
import { reposRepository } from "../../repositories/repos/repos.repository.js";
import { likesRepository } from "../../community/likes/likes.repository.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import { usernameRepository } from "../username/username.repository.js";
import type { RepoEvents } from "../../../domain/repo-events.js";
import { webhooksRepository } from "../../integrations/webhooks/webhooks.repository.js";
import { accountDeletionRepository as repo } from "./account-deletion.repository.js";
import { reservationEnd } from "../account/handles.js";

export interface AccountDeletionDeps {
  db: Db;
  dialect: DatabaseConfig["dialect"];
  clock: () => Date;
  reauthWindowSeconds: number;
  /** Days the deleted account's handle (and those of organizations deleted with it) stay reserved. */
  reservationDays: number;
  storage: RepoStorage;
  objectStore: ObjectStore;
  profiles: ProfileService;
  inference: InferenceService;
  events: RepoEvents;
  logger: Logger;
}

/** What happens to one organization the account belongs to. */
interface OrganizationFate {
  id: string;
  handle: string;
  role: string;
  members: number;
  outcome: "deleted" | "left" | "blocked";
}

/** The account, its organizations' fates, and what stops the deletion. */
interface DeletionPlan {
  user: UserRow;
  organizations: OrganizationFate[];
  blockers: AccountDeletionBlocker[];
}

/**
 * Deleting an account. The preview says what goes and what stops it; the
 * deletion, in one transaction, removes the account's repositories, the
 * organizations it is the only member of (with theirs), its webhooks and
 * inference data, and the account row, whose foreign keys take every token,
 * session, key, membership and setting with it at once. Ledger rows it made on
 * organizations that stay are kept for their accounting but unlinked, and the
 * handles are reserved, with no account, against impersonation. After the
 * commit: `repo.delete` webhook events, then the git directories, LFS objects
 * no other repository links, and the avatar leave the disk.
 */
export function createAccountDeletionService(deps: AccountDeletionDeps) {
  const { db, clock } = deps;
  let userReferences: Promise<Array<{ table: string; column: string; onDelete: string }>> | null = null;

  /** The foreign keys to accounts, read from the schema once (it does not change while the hub runs). */
  const referencesToUsers = () => (userReferences ??= foreignKeysTo(db, deps.dialect, "users"));

  async function planFor(tx: DbOrTx, userId: string): Promise<DeletionPlan> {
    const user = await usersRepository.findById(tx, userId);
    if (!user) throw notFound("The account no longer exists.");
    const organizations: OrganizationFate[] = [];
    const blockers: AccountDeletionBlocker[] = [];
    for (const membership of await orgsRepository.membershipsOfUser(tx, userId)) {
      const members = await orgsRepository.members(tx, membership.id);
      const otherAdmins = members.filter((m) => m.role === "admin" && m.user_id !== userId);
      const soleAdmin = membership.role === "admin" && otherAdmins.length === 0;
      const outcome = members.length <= 1 ? "deleted" : soleAdmin ? "blocked" : "left";
      organizations.push({
        id: membership.id,
        handle: membership.handle,
        role: membership.role,
        members: members.length,
        outcome,
      });
      if (outcome === "blocked") {
        const others = members.length - 1;
        blockers.push({
          code: "sole_admin",
          organization: membership.handle,
          message:
            `You are the only admin of ${membership.handle}, which has ${others} other member${others === 1 ? "" : "s"}: ` +
            `make one of them admin (PUT /api/organizations/${membership.handle}/members/{user} with {"role":"admin"}) ` +
            `or remove them (DELETE /api/organizations/${membership.handle}/members/{user}), then delete the account.`,
        });
      }
    }
    return { user, organizations, blockers };
  }

  const reservedUntil = () => reservationEnd(clock(), deps.reservationDays);
  const entry = (row: RepositoryRow, handle: string) => ({
    type: row.type,
    id: `${handle}/${row.name}`,
    private: row.private === 1,
  });

  /** Removes from disk what the deleted rows described, and tells webhooks; the account is already gone. */
  async function cleanUp(
    actor: string,
    repos: FoundRepo[],
    ownerIds: string[],
    oids: string[],
    avatar: string | null,
  ) {
    for (const found of repos) {
      await deps.events.publish({ scope: "repo", action: "delete", repo: found, actor });
    }
    const steps: Array<[string, () => Promise<unknown>]> = [
      ["webhook watches", () => webhooksRepository.dropNamespaceWatches(db, ownerIds)],
      ...repos.map((found): [string, () => Promise<unknown>] => [
        `repository ${found.row.id}`,
        () => deps.storage.remove(found.row.id),
      ]),
      [
        "LFS objects",
        () =>
          removeUnheldObjects(
            db,
            deps.objectStore,
            oids.map((oid) => ({ oid })),
          ),
      ],
      ["avatar", () => deps.profiles.collectAvatar(avatar)],
    ];
    for (const [what, step] of steps) {
      await step().catch((err: unknown) =>
        deps.logger.error({ err: (err as Error).message, what }, "cleanup after an account deletion failed"),
      );
    }
  }

  return {
    /** What deleting the caller's account would remove, and what stops it; changes nothing. */
    async preview(principal: Principal): Promise<AccountDeletionPreview> {
      const plan = await planFor(db, principal.userId);
      const { user } = plan;
      const doomed = plan.organizations.filter((o) => o.outcome === "deleted");
      const ownerIds = [user.id, ...doomed.map((o) => o.id)];
      const [repos, credentials, webhooks, context, usageRecords, elsewhere, references] = await Promise.all([
        repo.repositoriesOf(db, ownerIds),
        repo.credentials(db, user.id),
        webhooksRepository.count(db, user.id),
        deps.inference.billingContext(user.id),
        inferenceRepository.usageCount(db, user.id),
        inferenceRepository.usageByUserElsewhere(db, user.id, ownerIds),
        referencesToUsers(),
      ]);
      const records = [];
      for (const reference of references.filter((r) => r.onDelete === "cascade")) {
        const rows = await repo.rowsReferencing(db, reference.table, reference.column, user.id);
        if (rows > 0) records.push({ table: reference.table, rows });
      }
      return {
        name: user.handle,
        deletable: plan.blockers.length === 0,
        blockers: plan.blockers,
        confirm: user.handle,
        reauthenticationRequired: awaitsReauthentication(
          principal,
          "account:delete",
          clock(),
          deps.reauthWindowSeconds,
        ),
        usernameReservedUntil: reservedUntil(),
        repositories: repos.filter((r) => r.owner_id === user.id).map((r) => entry(r, user.handle)),
        organizations: plan.organizations.map((o) => ({
          name: o.handle,
          role: o.role,
          outcome: o.outcome,
          members: o.members,
          repositories: repos.filter((r) => r.owner_id === o.id).map((r) => entry(r, o.handle)),
        })),
        credentials,
        webhooks,
        inference: {
          usageRecords,
          providerKeys: context.sealedKeys.size,
          creditBalanceUsd: toUsd(context.balanceNanos),
          organizationUsageRecords: elsewhere,
        },
        records,
      };
    },

    /**
     * Deletes the caller's account once `confirm` names it and nothing blocks
     * it: one transaction for the data, then the disk and webhook events.
     */
    async execute(principal: Principal, confirm: string): Promise<AccountDeletion> {
      if (confirm !== principal.handle) {
        throw badRequest(
          "confirmation_mismatch",
          `"confirm" must be your username: send {"confirm": "${principal.handle}"} to delete the account ${principal.handle}.`,
          "confirm",
        );
      }
      const now = clock().toISOString();
      const until = reservedUntil();
      const done = await db.transaction().execute(async (tx) => {
        // Membership changes of these organizations wait for this transaction, so the plan holds.
        for (const membership of await orgsRepository.membershipsOfUser(tx, principal.userId)) {
          await orgsRepository.lock(tx, membership.id);
        }
        const plan = await planFor(tx, principal.userId);
        if (plan.blockers.length > 0) {
          throw new HubError(409, "account_deletion_blocked", plan.blockers.map((b) => b.message).join(" "));
        }
        const { user } = plan;
        const doomed = plan.organizations.filter((o) => o.outcome === "deleted");
        const owners = new Map<string, FoundRepo["owner"]>([
          [user.id, { type: "user", id: user.id, handle: user.handle }],
          ...doomed.map((o): [string, FoundRepo["owner"]] => [
            o.id,
            { type: "org", id: o.id, handle: o.handle },
          ]),
        ]);
        const ownerIds = [...owners.keys()];
        const rows = await repo.repositoriesOf(tx, ownerIds);
        const oids = await repo.lfsOidsOf(
          tx,
          rows.map((r) => r.id),
        );
        const avatar = (await profileRepository.find(tx, user.id))?.avatar_sha256 ?? null;
        for (const owner of owners.values()) {
          await usernameRepository.reserve(tx, {
            handle: owner.handle,
            user_id: null,
            reserved_until: until,
            created_at: now,
          });
        }
        await webhooksRepository.deleteOwnedBy(tx, ownerIds);
        for (const ownerId of ownerIds) await inferenceRepository.deleteOwner(tx, ownerId);
        await inferenceRepository.relinkUsage(tx, user.id, `deleted-account-${randomUUID()}`);
        await contentPreferencesRepository.dropSuppressionsOf(tx, [...ownerIds, ...rows.map((r) => r.id)]);
        for (const row of rows) await reposRepository.delete(tx, row.id);
        // The account's likes go with it (its row's foreign keys would take them too), and leave their counts.
        await likesRepository.forgetLiker(tx, user.id, deps.dialect === "postgres");
        for (const org of doomed) await repo.deleteOrganization(tx, org.id);
        await repo.deleteUser(tx, user.id);
        const repos = rows.map((row): FoundRepo => {
          const owner = owners.get(row.owner_id);
          if (!owner) throw new Error("A deleted repository has no deleted owner.");
          return { row, owner, fullName: `${owner.handle}/${row.name}`, type: row.type as RepoType };
        });
        return { plan, repos, ownerIds, oids, avatar };
      });
      await cleanUp(done.plan.user.handle, done.repos, done.ownerIds, done.oids, done.avatar);
      return {
        deleted: true,
        name: done.plan.user.handle,
        repositories: done.repos.map((r) => `${r.type}/${r.fullName}`).sort(),
        organizationsDeleted: done.plan.organizations
          .filter((o) => o.outcome === "deleted")
          .map((o) => o.handle),
        organizationsLeft: done.plan.organizations.filter((o) => o.outcome === "left").map((o) => o.handle),
        usernameReservedUntil: until,
      };
    },
  };
}

export type AccountDeletionService = ReturnType<typeof createAccountDeletionService>;
