import type { RepoType, UsernameMigration, UsernamePreview } from "@hub/api";
import { awaitsReauthentication } from "../../../auth/authorize.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { RepositoryRow } from "../../../db/schema.js";
import { HubError, notFound } from "../../../errors.js";
import { claimHandle, claimableHandle, reservationEnd } from "../account/handles.js";
import { usersRepository } from "../account/users.repository.js";
import { reposRepository } from "../../repositories/repos/repos.repository.js";
import { URL_PREFIX, type FoundRepo } from "../../../domain/repositories.js";
import type { RepoEvents } from "../../../domain/repo-events.js";
import { usernameRepository } from "./username.repository.js";

export interface UsernameServiceDeps {
  db: Db;
  clock: () => Date;
  events: RepoEvents;
  reauthWindowSeconds: number;
  config: {
    publicUrl: string;
    gitPublicUrl: string;
    sshPublicUrl: string;
    /** Days only the account may take back a username it gave up. */
    reservationDays: number;
  };
}

/**
 * Renaming an account: a preview of what moves, and the rename itself, which
 * moves every repository of the account in one transaction and leaves
 * redirects behind (repository pages, API paths and git remotes keep working
 * under the old name) and reserves the old username for the account.
 */
export function createUsernameService({
  db,
  clock,
  events,
  reauthWindowSeconds,
  config,
}: UsernameServiceDeps) {
  async function requireUser(userId: string) {
    const user = await usersRepository.findById(db, userId);
    if (!user) throw notFound("The account no longer exists.");
    return user;
  }

  /** Why the account may not take `username`, or null when it may. */
  async function problemWith(userId: string, current: string, username: string): Promise<HubError | null> {
    if (username === current) {
      return new HubError(400, "username_unchanged", `Your username already is "${username}".`, {
        field: "username",
      });
    }
    try {
      await claimableHandle(db, username, { now: clock(), field: "username", claimant: userId });
      return null;
    } catch (err) {
      if (err instanceof HubError) return err;
      throw err;
    }
  }

  const repoPath = (row: RepositoryRow, handle: string) =>
    `${URL_PREFIX[row.type as RepoType]}${handle}/${row.name}`;
  const reservedUntil = () => reservationEnd(clock(), config.reservationDays);

  return {
    /** What renaming the caller to `username` would do; changes nothing. */
    async preview(principal: Principal, username: string): Promise<UsernamePreview> {
      const user = await requireUser(principal.userId);
      const problem = await problemWith(user.id, user.handle, username);
      const repos = await usernameRepository.repositoriesOf(db, user.id);
      const from = user.handle;
      const to = username;
      return {
        current: from,
        username,
        valid: problem === null || !["invalid_handle", "reserved_handle"].includes(problem.code),
        available: problem === null,
        problem: problem ? { code: problem.code, message: problem.message } : null,
        repositories: repos.map((row) => ({
          type: row.type,
          from: `${from}/${row.name}`,
          to: `${to}/${row.name}`,
        })),
        redirects: [
          {
            from: `${config.publicUrl}/api/users/${from}/overview`,
            to: `${config.publicUrl}/api/users/${to}/overview`,
          },
          ...repos.flatMap((row) => [
            {
              from: `${config.publicUrl}/${repoPath(row, from)}`,
              to: `${config.publicUrl}/${repoPath(row, to)}`,
            },
            {
              from: `${config.publicUrl}/api/${row.type}s/${from}/${row.name}`,
              to: `${config.publicUrl}/api/${row.type}s/${to}/${row.name}`,
            },
          ]),
        ],
        gitRemotes: repos.flatMap((row) => [
          {
            from: `${config.gitPublicUrl}/${repoPath(row, from)}.git`,
            to: `${config.gitPublicUrl}/${repoPath(row, to)}.git`,
          },
          {
            from: `${config.sshPublicUrl}/${repoPath(row, from)}.git`,
            to: `${config.sshPublicUrl}/${repoPath(row, to)}.git`,
          },
        ]),
        oldUsernameReservedUntil: reservedUntil(),
        reauthenticationRequired: awaitsReauthentication(
          principal,
          "account:change-username",
          clock(),
          reauthWindowSeconds,
        ),
      };
    },

    /**
     * Renames the caller. In one transaction: the account's handle, a redirect
     * from every repository's old name, repository grants of tokens rewritten
     * to the new names, and the old username reserved for the account; then a
     * `repo.move` event per repository for webhooks.
     */
    async migrate(principal: Principal, username: string, actor: string): Promise<UsernameMigration> {
      const user = await requireUser(principal.userId);
      const problem = await problemWith(user.id, user.handle, username);
      if (problem) throw problem;
      const now = clock().toISOString();
      const until = reservedUntil();
      const previous = user.handle;
      const repos = await db
        .transaction()
        .execute(async (tx) => {
          // Checked again inside the transaction: a concurrent rename or sign-up may have taken it.
          await claimableHandle(tx, username, { now: clock(), field: "username", claimant: user.id });
          await claimHandle(tx, username, user.id);
          await usernameRepository.rename(tx, user.id, username);
          const owned = await usernameRepository.repositoriesOf(tx, user.id);
          for (const row of owned) {
            await reposRepository.addRedirect(tx, {
              type: row.type,
              owner_handle: previous,
              name: row.name,
              repository_id: row.id,
              created_at: now,
            });
          }
          for (const token of await usernameRepository.tokensGrantingUnder(tx, previous)) {
            const grants = JSON.parse(token.repositories ?? "[]") as string[];
            const renamed = grants.map((id) =>
              id.startsWith(`${previous}/`) ? `${username}/${id.slice(previous.length + 1)}` : id,
            );
            await usernameRepository.setTokenRepositories(tx, token.id, JSON.stringify(renamed));
          }
          // Kept even with no reservation period: until someone claims it, the old profile URL redirects.
          await usernameRepository.reserve(tx, {
            handle: previous,
            user_id: user.id,
            reserved_until: until,
            created_at: now,
          });
          return owned;
        })
        .catch(async (err: unknown) => {
          // Two claims of one handle at once: the loser learns it is taken.
          if (!(err instanceof HubError) && (await usersRepository.findByHandle(db, username))) {
            throw new HubError(409, "handle_taken", `The handle "${username}" is taken; choose another.`, {
              field: "username",
            });
          }
          throw err;
        });
      for (const row of repos) {
        const owner = { type: "user" as const, id: user.id };
        const repo: FoundRepo = {
          row,
          owner: { ...owner, handle: username },
          fullName: `${username}/${row.name}`,
          type: row.type as RepoType,
        };
        await events.publish({
          scope: "repo",
          action: "move",
          repo,
          movedFrom: { owner: { ...owner, handle: previous }, name: row.name },
          actor,
        });
      }
      return {
        name: username,
        previousName: previous,
        oldUsernameReservedUntil: until,
        repositories: repos.map((row) => ({
          type: row.type,
          from: `${previous}/${row.name}`,
          to: `${username}/${row.name}`,
        })),
      };
    },

    /** The usernames the account gave up that only it may take back, and until when. */
    async reservations(userId: string) {
      const rows = await usernameRepository.reservationsOf(db, userId, clock().toISOString());
      return rows.map((row) => ({ name: row.handle, reservedUntil: row.reserved_until }));
    },

    /** The current username of the account that renamed away from `handle`, or null. */
    successorOf: (handle: string) => usernameRepository.successorOf(db, handle),
  };
}

export type UsernameService = ReturnType<typeof createUsernameService>;
