import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, sshCommand } from "../test-support/git-client.js";
import { startHub, type TestHub } from "../test-support/hub-process.js";

/*
 * The access model, proven the same on every surface: each actor x credential x
 * repository x action is tried over the HTTP API and over git, and both answers
 * are compared with an oracle written here from the rules, not from the code;
 * then each account does the same over SSH with a registered key.
 */

type Actor = "alice" | "adm" | "wri" | "con" | "rea" | "out";
const ORG_ROLE: Partial<Record<Actor, string>> = {
  adm: "admin",
  wri: "write",
  con: "contributor",
  rea: "read",
};
const REPOS = [
  { id: "alice/pub", owner: "alice", private: false },
  { id: "alice/priv", owner: "alice", private: true },
  { id: "acme/pub", owner: "acme", private: false },
  { id: "acme/priv", owner: "acme", private: true },
] as const;
type Repo = (typeof REPOS)[number];
type Action = "read" | "write";

interface CredentialSpec {
  name: string;
  args: string[];
  scopes: string[];
  org?: string;
  repos?: string[];
  invalid?: "expired" | "revoked";
  membersOnly?: boolean;
}

const CREDENTIALS: CredentialSpec[] = [
  { name: "role read", args: ["--role", "read"], scopes: ["repo:read"] },
  { name: "role write", args: ["--role", "write"], scopes: ["repo:read", "repo:write"] },
  { name: "role admin", args: ["--role", "admin"], scopes: ["repo:read", "repo:write"] },
  { name: "fine-grained repo:read", args: ["--scopes", "repo:read"], scopes: ["repo:read"] },
  { name: "fine-grained repo:write", args: ["--scopes", "repo:write"], scopes: ["repo:write"] },
  {
    name: "fine-grained read+write",
    args: ["--scopes", "repo:read,repo:write"],
    scopes: ["repo:read", "repo:write"],
  },
  ...["repo:delete", "community:write", "jobs:run", "inference:run", "account:keys", "webhooks:manage"].map(
    (scope) => ({
      name: `fine-grained ${scope}`,
      args: ["--scopes", scope],
      scopes: [],
    }),
  ),
  {
    name: "fine-grained for acme/priv",
    args: ["--scopes", "repo:read,repo:write", "--repos", "acme/priv"],
    scopes: ["repo:read", "repo:write"],
    repos: ["acme/priv"],
  },
  {
    name: "bounded to acme",
    args: ["--role", "write", "--org", "acme"],
    scopes: ["repo:read", "repo:write"],
    org: "acme",
    membersOnly: true,
  },
  { name: "expired", args: ["--role", "write", "--expires-in", "1s"], scopes: [], invalid: "expired" },
  { name: "revoked", args: ["--role", "write"], scopes: [], invalid: "revoked" },
];

/** Collections, owned like the repositories above, read with GET and written with PATCH over the HTTP API. */
const COLLECTIONS = [
  { title: "pub", owner: "alice", private: false },
  { title: "priv", owner: "alice", private: true },
  { title: "pub", owner: "acme", private: false },
  { title: "priv", owner: "acme", private: true },
] as const;
type CollectionSpec = (typeof COLLECTIONS)[number];

/** Whether a credential may change collections at all: a write or admin role, or the community:write scope. */
const writesCommunity = (credential: CredentialSpec) =>
  (credential.args[0] === "--role" && credential.args[1] !== "read") ||
  (credential.args[0] === "--scopes" && (credential.args[1] ?? "").split(",").includes("community:write"));

/** What the rules say of collections, independently of the hub's code. */
function expectedForCollection(
  actor: Actor | null,
  credential: CredentialSpec | null,
  collection: CollectionSpec,
  action: Action,
): boolean {
  if (!actor || !credential) return action === "read" && !collection.private;
  if (credential.invalid) return false;
  if (action === "read" && !collection.private) return true;
  if (action === "read" ? !credential.scopes.includes("repo:read") : !writesCommunity(credential))
    return false;
  if (credential.org && collection.owner !== credential.org) return false;
  if (credential.repos) return false;
  if (collection.owner === "alice") return actor === "alice";
  const role = ORG_ROLE[actor];
  if (action === "read") return role !== undefined;
  return role === "write" || role === "admin";
}

/** What the rules say, independently of the hub's code. */
function expected(
  actor: Actor | null,
  credential: CredentialSpec | null,
  repo: Repo,
  action: Action,
): boolean {
  if (!actor || !credential) return action === "read" && !repo.private;
  if (credential.invalid) return false;
  if (action === "read" && !repo.private) return true;
  if (!credential.scopes.includes(action === "read" ? "repo:read" : "repo:write")) return false;
  if (credential.org && repo.owner !== credential.org) return false;
  if (credential.repos && !credential.repos.includes(repo.id)) return false;
  if (repo.owner === "alice") return actor === "alice";
  const role = ORG_ROLE[actor];
  if (action === "read") return role !== undefined;
  return role === "write" || role === "admin";
}

describe("one access model across the HTTP API and git over HTTPS", () => {
  let hub: TestHub;
  let work: string;
  let commit = "";
  let counter = 0;
  const tokens = new Map<string, string>();
  const collectionSlugs = new Map<string, string>();

  beforeAll(async () => {
    hub = await startHub({ env: { HUB_RATE_LIMIT: "1000000" } });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-matrix-"));
    for (const actor of Object.keys({ alice: 1, adm: 1, wri: 1, con: 1, rea: 1, out: 1 }) as Actor[])
      await hub.createUser(actor);
    expect((await hub.cli(["org", "create", "acme", "--owner", "adm"])).code).toBe(0);
    for (const [actor, role] of Object.entries(ORG_ROLE)) {
      if (actor !== "adm")
        expect((await hub.cli(["org", "add-member", "acme", actor, "--role", role])).code).toBe(0);
    }
    const owner = await hub.createToken("alice");
    const orgAdmin = await hub.createToken("adm");
    for (const repo of REPOS) {
      const response = await hub.request("/api/repos", {
        method: "POST",
        token: repo.owner === "alice" ? owner : orgAdmin,
        json: { repo_id: repo.id, private: repo.private },
      });
      expect(response.status).toBe(201);
    }
    for (const spec of COLLECTIONS) {
      const response = await hub.request("/api/collections", {
        method: "POST",
        token: spec.owner === "alice" ? owner : orgAdmin,
        json: { title: spec.title, namespace: spec.owner, private: spec.private },
      });
      expect(response.status).toBe(200);
      collectionSlugs.set(`${spec.owner}/${spec.title}`, ((await response.json()) as { slug: string }).slug);
    }
    // The actors mint their tokens side by side (the admin commands take turns in this process).
    const actors = ["alice", "adm", "wri", "con", "rea", "out"] as Actor[];
    await Promise.all(
      actors.map(async (actor) => {
        for (const credential of CREDENTIALS) {
          if (credential.membersOnly && !ORG_ROLE[actor]) continue;
          const token = await hub.createToken(actor, credential.args);
          if (credential.invalid === "revoked") {
            const me = (await (await hub.request("/api/me", { token })).json()) as {
              auth: { tokenId: string };
            };
            expect(
              (await hub.request(`/api/me/tokens/${me.auth.tokenId}`, { method: "DELETE", token })).status,
            ).toBe(204);
          }
          tokens.set(`${actor}/${credential.name}`, token);
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1200)); // let the expiring tokens expire
    await git(["init", "-q", "local"], work);
    writeFileSync(path.join(work, "local", "probe.txt"), "probe");
    await git(["add", "probe.txt"], path.join(work, "local"));
    await git(["commit", "-qm", "probe"], path.join(work, "local"));
    commit = (await git(["rev-parse", "HEAD"], path.join(work, "local"))).stdout.trim();
  }, 180_000);
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** Tries one action on both surfaces and returns whether each allowed it. */
  async function attempt(token: string | null, repo: Repo, action: Action) {
    const n = ++counter;
    const auth = token
      ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x:${token}`).toString("base64")}`]
      : [];
    const url = `${hub.gitUrl}/${repo.id}`;
    const [http, viaGit] = await Promise.all([
      action === "read"
        ? hub.request(`/api/models/${repo.id}`, token ? { token } : {})
        : hub.request(`/api/models/${repo.id}/branch/http-${n}`, {
            method: "POST",
            json: {},
            ...(token ? { token } : {}),
          }),
      action === "read"
        ? git([...auth, "ls-remote", url], work)
        : git([...auth, "push", url, `${commit}:refs/heads/git-${n}`], path.join(work, "local")),
    ]);
    return { http: http.status === 200, git: viaGit.code === 0, status: http.status };
  }

  const cases: Array<[string, Actor | null, CredentialSpec | null]> = [["anonymous", null, null]];
  for (const actor of ["alice", "adm", "wri", "con", "rea", "out"] as Actor[]) {
    for (const credential of CREDENTIALS) {
      if (credential.membersOnly && !ORG_ROLE[actor]) continue;
      cases.push([`${actor} with ${credential.name}`, actor, credential]);
    }
  }

  it.each(cases)(
    "%s: every repository and action answers as the rules say, on both surfaces",
    async (_name, actor, credential) => {
      const token = actor && credential ? (tokens.get(`${actor}/${credential.name}`) ?? "") : null;
      const mismatches: string[] = [];
      for (const repo of REPOS) {
        for (const action of ["read", "write"] as const) {
          const want = expected(actor, credential, repo, action);
          const got = await attempt(token, repo, action);
          if (got.http !== want || got.git !== want) {
            mismatches.push(
              `${action} ${repo.id}: expected ${want}, HTTP ${got.http} (${got.status}), git ${got.git}`,
            );
          }
        }
      }
      expect(mismatches).toEqual([]);
    },
  );

  it.each(cases)(
    "%s: every collection and action answers as the rules say over the HTTP API",
    async (_name, actor, credential) => {
      const token = actor && credential ? (tokens.get(`${actor}/${credential.name}`) ?? "") : null;
      const mismatches: string[] = [];
      for (const collection of COLLECTIONS) {
        const slug = collectionSlugs.get(`${collection.owner}/${collection.title}`) ?? "";
        for (const action of ["read", "write"] as const) {
          const want = expectedForCollection(actor, credential, collection, action);
          const response = await hub.request(`/api/collections/${slug}`, {
            ...(action === "read" ? {} : { method: "PATCH", json: { theme: "blue" } }),
            ...(token ? { token } : {}),
          });
          if ((response.status === 200) !== want)
            mismatches.push(`${action} ${slug}: expected ${want}, HTTP ${response.status}`);
        }
      }
      expect(mismatches).toEqual([]);
    },
  );

  it.each(["alice", "adm", "wri", "con", "rea", "out"] as Actor[])(
    "%s over SSH with a registered key: the same answers as the rules give the account",
    async (actor) => {
      const keyFile = path.join(work, `${actor}_ssh`);
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keyFile]);
      const token = tokens.get(`${actor}/role write`) ?? "";
      const added = await hub.request("/api/me/keys", {
        method: "POST",
        token,
        json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
      });
      expect(added.status).toBe(201);
      const ssh = sshCommand(keyFile);
      const person: CredentialSpec = { name: "ssh key", args: [], scopes: ["repo:read", "repo:write"] };
      const mismatches: string[] = [];
      for (const repo of REPOS) {
        for (const action of ["read", "write"] as const) {
          const n = ++counter;
          const result =
            action === "read"
              ? await git(["ls-remote", `${hub.sshUrl}/${repo.id}.git`], work, { GIT_SSH_COMMAND: ssh })
              : await git(
                  ["push", `${hub.sshUrl}/${repo.id}.git`, `${commit}:refs/heads/ssh-${n}`],
                  path.join(work, "local"),
                  { GIT_SSH_COMMAND: ssh },
                );
          const want = expected(actor, person, repo, action);
          if ((result.code === 0) !== want)
            mismatches.push(`${action} ${repo.id}: expected ${want}, SSH ${result.code === 0}`);
        }
      }
      expect(mismatches).toEqual([]);
    },
  );

  it("applies membership changes on the very next request, on both surfaces", async () => {
    const token = tokens.get("out/role write") ?? "";
    const repo = REPOS[3];
    expect(await attempt(token, repo, "read")).toMatchObject({ http: false, git: false });
    expect((await hub.cli(["org", "add-member", "acme", "out", "--role", "write"])).code).toBe(0);
    expect(await attempt(token, repo, "write")).toMatchObject({ http: true, git: true });
    expect((await hub.cli(["org", "add-member", "acme", "out", "--role", "read"])).code).toBe(0);
    expect(await attempt(token, repo, "write")).toMatchObject({ http: false, git: false });
    expect(await attempt(token, repo, "read")).toMatchObject({ http: true, git: true });
  });
});
