import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { REPO_TYPES, type RepoType } from "@hub/api";
import type { FastifyBaseLogger } from "fastify";
import ssh2 from "ssh2";
import type { Connection, ServerChannel } from "ssh2";
import { noteArrival } from "../../db/change-epoch.js";
import { sshFingerprint } from "../../auth/public-keys.js";
import type { PullRequests } from "../../domain/pull-requests.js";
import { URL_PREFIX, type FoundRepo, type RepoLookup } from "../../domain/repositories.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { Principal } from "../../auth/credential.js";
import { mintSshLfsToken } from "../../auth/ssh-lfs-token.js";
import { HubError } from "../../errors.js";
import { GIT_PROTOCOL, isGitService, type GitServiceRunner } from "../git-service.js";
import type { PushRights } from "../push-rights.js";
import { pushGate, repoGate, requirePushable } from "../repo-gate.js";

const { Server, utils } = ssh2;

/** `git-upload-pack 'owner/name.git'` and friends, as git sends them (with or without quotes and a leading slash). */
const COMMAND =
  /^(git-upload-pack|git-receive-pack) '?\/?((?:datasets\/|spaces\/|mcps\/)?[a-z0-9][a-z0-9-]{0,39}\/[a-z0-9][a-z0-9._-]{0,95}?)(?:\.git)?'?$/;
/** `git-lfs-authenticate 'owner/name.git' upload|download`, which git-lfs runs before talking to the LFS API. */
const LFS_AUTHENTICATE =
  /^git-lfs-authenticate '?\/?((?:datasets\/|spaces\/|mcps\/)?[a-z0-9][a-z0-9-]{0,39}\/[a-z0-9][a-z0-9._-]{0,95}?)(?:\.git)?'? (upload|download)$/;
/** How long the credential `git-lfs-authenticate` hands out lasts. */
const LFS_TOKEN_SECONDS = 3600;
/** A connection must finish authenticating within this long. */
const LOGIN_GRACE_MS = 30_000;
/** Connections with no traffic for this long are closed. */
const IDLE_TIMEOUT_MS = 10 * 60_000;
const MAX_UNAUTHENTICATED = 64;

/** What the SSH server needs of the registered keys; the keys area implements it. */
export interface SshKeys {
  /** The key and its account, by the fingerprint a client offers or the id a session recorded; null when unknown. */
  sshPrincipal(
    by: { fingerprint: string } | { id: string },
  ): Promise<{ publicKey: string; principal: Principal } | null>;
  /** Notes that a key was used. */
  touch(keyId: string): Promise<unknown>;
}

export interface SshServerDeps {
  dataDir: string;
  host: string;
  port: number;
  keys: SshKeys;
  repos: RepoLookup;
  git: GitServiceRunner;
  authorize: Authorize;
  pullRequests: Pick<PullRequests, "pushable">;
  /** Base URL of git over HTTPS, where the LFS API lives. */
  gitPublicUrl: string;
  serverKey: Buffer;
  /** Open connections one key may hold at once; more are refused at authentication. */
  maxConnectionsPerKey: number;
  logger: FastifyBaseLogger;
}

/**
 * ssh2's generator drops a leading zero byte of the public key now and then
 * (about 1 in 300 keys) and then cannot read its own key back; make another.
 */
function generateHostKey(): string {
  for (;;) {
    const { private: key } = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
}

/** The host key, made on first start and kept in the data dir, readable by the hub alone. */
async function hostKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, "secrets", "ssh_host_ed25519_key");
  try {
    return await readFile(file, "utf8");
  } catch {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    // Written whole beside the file and linked into place: a process starting at the same moment on a
    // shared data dir reads the first key linked, never an empty or half-written one.
    const temporary = `${file}.${randomBytes(6).toString("hex")}`;
    await writeFile(temporary, generateHostKey(), { mode: 0o600 });
    try {
      await link(temporary, file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
    } finally {
      await rm(temporary, { force: true });
    }
    await chmod(file, 0o600);
    return readFile(file, "utf8");
  }
}

/** The repository kind and `owner/name` an SSH path names. */
function repositoryPath(raw: string): { type: RepoType; owner: string; name: string } {
  const type = REPO_TYPES.find((t) => URL_PREFIX[t] !== "" && raw.startsWith(URL_PREFIX[t])) ?? "model";
  const [owner = "", name = ""] = raw.slice(URL_PREFIX[type].length).split("/");
  return { type, owner, name };
}

/**
 * Git over SSH (user `git`, public-key authentication against the accounts'
 * active keys). ssh2 does not verify the signature of a public-key attempt, so
 * this server does, and binds the key only after a verified signature. Every
 * command looks the key up again, so a removed key stops working at once; the
 * same authorization function as HTTPS decides read and write.
 */
export async function createSshServer(deps: SshServerDeps) {
  const { keys, repos, authorize, logger } = deps;
  const gate = repoGate(repos, authorize);
  const admitPush = pushGate(repos, authorize, deps.pullRequests);
  let unauthenticated = 0;
  const connectionsPerKey = new Map<string, number>();

  const server = new Server(
    { hostKeys: [await hostKey(deps.dataDir)], ident: "Hub" },
    (client: Connection) => {
      let keyId: string | null = null;
      unauthenticated++;
      let counted = true;
      const uncount = () => {
        if (counted) unauthenticated--;
        counted = false;
      };
      if (unauthenticated > MAX_UNAUTHENTICATED) {
        uncount();
        client.end();
        return;
      }
      const grace = setTimeout(() => client.end(), LOGIN_GRACE_MS);
      client.on("error", (err) => logger.debug({ err: err.message }, "ssh connection error"));
      client.on("close", () => {
        clearTimeout(grace);
        uncount();
        if (keyId !== null) {
          const left = (connectionsPerKey.get(keyId) ?? 1) - 1;
          if (left > 0) connectionsPerKey.set(keyId, left);
          else connectionsPerKey.delete(keyId);
        }
      });

      client.on("authentication", (ctx) => {
        noteArrival();
        void (async () => {
          if (ctx.method !== "publickey" || ctx.username !== "git") return ctx.reject(["publickey"]);
          const found = await keys.sshPrincipal({ fingerprint: sshFingerprint(ctx.key.data) });
          if (!found) return ctx.reject(["publickey"]);
          if (!ctx.signature || !ctx.blob) return ctx.accept(); // only a query: nothing is bound to the connection
          const stored = utils.parseKey(found.publicKey);
          if (stored instanceof Error || !stored.verify(ctx.blob, ctx.signature, ctx.hashAlgo))
            return ctx.reject(["publickey"]);
          const verified =
            found.principal.credential.type === "ssh_key" ? found.principal.credential.keyId : null;
          if (verified === null) return ctx.reject(["publickey"]);
          const open = connectionsPerKey.get(verified) ?? 0;
          if (open >= deps.maxConnectionsPerKey) {
            logger.warn({ keyId: verified, open }, "ssh key holds too many connections; refused");
            return ctx.reject(["publickey"]);
          }
          connectionsPerKey.set(verified, open + 1);
          keyId = verified;
          ctx.accept();
        })().catch((err: Error) => {
          logger.error({ err: err.message }, "ssh authentication failed");
          ctx.reject(["publickey"]);
        });
      });

      let idle: NodeJS.Timeout | undefined;
      /** Any traffic keeps the connection; none for IDLE_TIMEOUT_MS closes it. */
      const active = () => {
        clearTimeout(idle);
        idle = setTimeout(() => client.end(), IDLE_TIMEOUT_MS);
      };
      client.on("close", () => clearTimeout(idle));

      client.on("ready", () => {
        clearTimeout(grace);
        uncount();
        active();
        client.on("session", (accept) => {
          const session = accept();
          let protocol: string | undefined;
          session.on("env", (accept, reject, info) => {
            if (info.key === "GIT_PROTOCOL" && GIT_PROTOCOL.test(info.val)) {
              protocol = info.val;
              accept?.();
            } else reject?.();
          });
          session.on("pty", (_accept, reject) => reject?.());
          session.on("subsystem", (_accept, reject) => reject?.());
          session.on("shell", (accept) => {
            noteArrival();
            const channel = accept();
            void keys.sshPrincipal({ id: keyId ?? "" }).then((found) => {
              channel.stderr.write(
                `Hi ${found?.principal.handle ?? "there"}, the hub gives no shell; use git to clone and push.\r\n`,
              );
              channel.exit(1);
              channel.end();
            });
          });
          session.on("exec", (accept, _reject, info) => {
            noteArrival();
            const channel = accept();
            void run(channel, info.command, protocol).catch((err: Error) => {
              logger.error({ err: err.message }, "ssh command failed");
              fail(channel, "The hub failed to run this command.");
            });
          });
        });
      });
      client.on("tcpip", (_accept, reject) => reject());

      /** Ends a channel with a message git prints. */
      function fail(channel: ServerChannel, message: string) {
        channel.stderr.write(`${message}\n`);
        channel.exit(1);
        channel.end();
      }

      async function run(channel: ServerChannel, command: string, protocol: string | undefined) {
        const git = COMMAND.exec(command.trim());
        const lfs = LFS_AUTHENTICATE.exec(command.trim());
        const target = git?.[2] ?? lfs?.[1];
        if (!target) {
          return fail(
            channel,
            "Only git-upload-pack and git-receive-pack of a repository (and git-lfs-authenticate) can run here.",
          );
        }
        const found = await keys.sshPrincipal({ id: keyId ?? "" });
        if (!found)
          return fail(
            channel,
            "This SSH key is no longer registered; add it again in your account settings.",
          );
        const principal: Principal = found.principal;
        const writes = git?.[1] === "git-receive-pack" || lfs?.[2] === "upload";
        const { type, owner, name } = repositoryPath(target);
        let repo: FoundRepo;
        let rights: PushRights | undefined;
        try {
          if (writes) {
            // A push, or git-lfs asking to upload: what it may update is decided again per ref (hook, LFS batch).
            ({ repo, rights } = await admitPush(principal, { type, owner, name }));
            requirePushable(rights);
          } else repo = await gate(principal, { type, owner, name }, "repo:download");
        } catch (err) {
          if (!(err instanceof HubError)) throw err;
          return fail(
            channel,
            err.status !== 403
              ? `Repository ${owner}/${name} was not found, or your key may not see it.`
              : writes
                ? `You may not push to ${owner}/${name}: ${err.message}`
                : err.message,
          );
        }
        const credential = principal.credential;
        const usedKey = credential.type === "ssh_key" ? credential.keyId : "";
        await keys.touch(usedKey);
        if (lfs) {
          const expires = Math.floor(Date.now() / 1000) + LFS_TOKEN_SECONDS;
          const answer = {
            href: `${deps.gitPublicUrl}/${URL_PREFIX[type]}${repo.fullName}.git/info/lfs`,
            header: { Authorization: `Bearer ${mintSshLfsToken(deps.serverKey, usedKey, expires)}` },
            expires_in: LFS_TOKEN_SECONDS,
          };
          channel.write(`${JSON.stringify(answer)}\n`);
          channel.exit(0);
          channel.end();
          return;
        }
        const service = git?.[1];
        if (!isGitService(service)) return;
        const session = deps.git.start(repo, service, { protocol, actor: principal.handle, rights });
        const { child } = session;
        child.once("error", (err) => fail(channel, `The hub could not start git: ${err.message}`));
        // pipe() follows backpressure both ways: a slow client slows git, nothing piles up in memory.
        channel.on("data", active);
        child.stdout.on("data", active);
        channel.pipe(child.stdin);
        child.stdout.pipe(channel, { end: false });
        child.stderr.pipe(channel.stderr, { end: false });
        channel.on("close", () => child.kill("SIGTERM"));
        child.once("close", (code) => {
          // A push is recorded (for webhooks) before git's exit status reaches the client.
          void session
            .finish()
            .catch((err: Error) =>
              deps.logger.error({ err: err.message, repo: repo.fullName }, "push not recorded"),
            )
            .finally(() => {
              channel.exit(code ?? 1);
              channel.end();
            });
        });
      }
    },
  );

  return {
    /** Starts listening and returns the address clients use. */
    listen(): Promise<string> {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(deps.port, deps.host, () => {
          const address = server.address() as AddressInfo;
          resolve(`ssh://git@${deps.host}:${address.port}`);
        });
      });
    },
    close(): Promise<void> {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
