import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { FoundRepo, RepoLookup } from "../domain/repositories.js";
import { gitEnvironment, runGit } from "./git-command.js";
import { pushHookEnvironment, type PushRights } from "./push-rights.js";
import type { RepoStorage } from "./repo-storage.js";

/**
 * The two git services both transports run, and the access each needs
 * (https://git-scm.com/docs/pack-protocol); fetching is downloading, which a
 * gated repository guards.
 */
export const GIT_SERVICES = {
  "git-upload-pack": { command: "upload-pack", action: "repo:download" },
  "git-receive-pack": { command: "receive-pack", action: "repo:write" },
} as const;
export type GitService = keyof typeof GIT_SERVICES;

/** Gitea's rule for what may pass from a client's Git-Protocol header or environment into GIT_PROTOCOL. */
export const GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

/** How many repositories' protocol v2 capability advertisements one process keeps. */
const MAX_ADVERTISEMENTS = 1000;

/** Whether a Git-Protocol header (or its absence) asks for protocol version 2, in a value GIT_PROTOCOL passes. */
export function asksVersion2(protocol: unknown): boolean {
  return typeof protocol === "string" && GIT_PROTOCOL.test(protocol) && /(^|:)version=2(:|$)/.test(protocol);
}

/** Whether a string names one of the services. */
export function isGitService(value: unknown): value is GitService {
  return typeof value === "string" && Object.hasOwn(GIT_SERVICES, value);
}

/** One running git service: its process, and what to do once it has exited. */
export interface GitSession {
  child: ChildProcessWithoutNullStreams;
  /**
   * Records the refs a push updated (for webhooks, and to retire cached
   * revisions); call once git has exited and before its status reaches the
   * client, so a push git reports done always has its deliveries.
   */
  finish(): Promise<void>;
}

export interface GitServiceDeps {
  storage: RepoStorage;
  repos: Pick<RepoLookup, "refsUpdated">;
  maxGitBlobBytes: number;
}

/**
 * Runs git's own upload-pack and receive-pack in a repository for both
 * transports (smart HTTP and SSH): the push-policy hooks (given what the
 * pusher may update), the blob size limit, the client's protocol version, and
 * the record of a push's refs.
 */
export function createGitService({ storage, repos, maxGitBlobBytes }: GitServiceDeps) {
  const hookArgs = ["-c", `core.hooksPath=${storage.hooksDir}`];
  const advertisements = new Map<string, Promise<Buffer>>();
  return {
    /**
     * upload-pack's protocol v2 capability advertisement (what a v2 fetch or clone asks for first), as git
     * itself writes it for the repository. It names no refs, only what the installed git and the repository's
     * configuration offer, so it is asked of git once per repository and kept (the 1,000 repositories asked
     * about last): a fetch then starts two processes instead of three. Whatever else a client's Git-Protocol
     * says, git is asked with `version=2` alone, so no header makes the hub ask again. A failure is not kept.
     */
    v2Capabilities(repo: FoundRepo): Promise<Buffer> {
      const id = repo.row.id;
      const kept = advertisements.get(id);
      if (kept) {
        // Kept in the order of last use: the oldest to go is the one asked about longest ago.
        advertisements.delete(id);
        advertisements.set(id, kept);
        return kept;
      }
      const asked = runGit([...hookArgs, "upload-pack", "--stateless-rpc", "--advertise-refs", "."], {
        cwd: storage.pathOf(id),
        env: { HUB_MAX_GIT_BLOB_BYTES: String(maxGitBlobBytes), GIT_PROTOCOL: "version=2" },
      });
      if (advertisements.size >= MAX_ADVERTISEMENTS) {
        const oldest = advertisements.keys().next();
        if (!oldest.done) advertisements.delete(oldest.value);
      }
      advertisements.set(id, asked);
      asked.catch(() => {
        if (advertisements.get(id) === asked) advertisements.delete(id);
      });
      return asked;
    },

    start(
      repo: FoundRepo,
      service: GitService,
      options: {
        /** The Git-Protocol value the client asked for; ignored unless it passes GIT_PROTOCOL. */
        protocol?: string;
        /** Smart HTTP runs each request on its own: `advertise` lists refs, `rpc` takes one request. */
        stateless?: "advertise" | "rpc";
        /** The handle of the account a push's event names. */
        actor: string | null;
        /** What a push may update (from `pushGate`); without it the pre-receive hook refuses every ref. */
        rights?: PushRights;
      },
    ): GitSession {
      const receive = service === "git-receive-pack";
      const push = receive && options.stateless !== "advertise" ? storage.pushRecord() : null;
      const env: Record<string, string> = {
        HUB_MAX_GIT_BLOB_BYTES: String(maxGitBlobBytes),
        ...(receive && options.rights ? pushHookEnvironment(options.rights) : {}),
        ...push?.env,
      };
      if (options.protocol !== undefined && GIT_PROTOCOL.test(options.protocol))
        env.GIT_PROTOCOL = options.protocol;
      const args = [...hookArgs, GIT_SERVICES[service].command];
      if (options.stateless) args.push("--stateless-rpc");
      if (options.stateless === "advertise") args.push("--advertise-refs");
      args.push(".");
      const child = spawn("git", args, {
        cwd: storage.pathOf(repo.row.id),
        env: gitEnvironment(env),
        stdio: "pipe",
      });
      // An early exit of git surfaces through its status; a broken stdin pipe must not crash the hub.
      child.stdin.on("error", () => {});
      return {
        child,
        async finish() {
          if (!push) return;
          // The post-receive hook records only refs that moved: they are recorded (and the repository's row
          // touched, which retires cached revisions) even when git then failed to answer the client.
          await repos.refsUpdated(repo, await push.updates(), options.actor);
        },
      };
    },
  };
}

export type GitServiceRunner = ReturnType<typeof createGitService>;
