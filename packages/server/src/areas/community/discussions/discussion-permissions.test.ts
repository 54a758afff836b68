import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

/*
 * Who may do what in discussions and pull requests: every actor x credential
 * x repository x operation is tried over the API and compared with an oracle
 * written here from the rules (issue 18), not from the code.
 */

type Actor = "alice" | "adm" | "wri" | "con" | "rea" | "out";
const ACTORS: Actor[] = ["alice", "adm", "wri", "con", "rea", "out"];
const ORG_ROLE: Partial<Record<Actor, string>> = {
  adm: "admin",
  wri: "write",
  con: "contributor",
  rea: "read",
};
const REPOS = [
  { id: "alice/pub", owner: "alice", private: false, gated: false },
  { id: "alice/priv", owner: "alice", private: true, gated: false },
  { id: "alice/gated", owner: "alice", private: false, gated: true },
  { id: "acme/pub", owner: "acme", private: false, gated: false },
  { id: "acme/priv", owner: "acme", private: true, gated: false },
  { id: "acme/gated", owner: "acme", private: false, gated: true },
] as const;
type Repo = (typeof REPOS)[number];

interface Credential {
  name: string;
  args: string[];
  scopes: Array<"repo:read" | "repo:write" | "community:write">;
}
const CREDENTIALS: Credential[] = [
  { name: "role read", args: ["--role", "read"], scopes: ["repo:read"] },
  { name: "role write", args: ["--role", "write"], scopes: ["repo:read", "repo:write", "community:write"] },
  { name: "fine-grained repo:read", args: ["--scopes", "repo:read"], scopes: ["repo:read"] },
  {
    name: "fine-grained repo:read+community:write",
    args: ["--scopes", "repo:read,community:write"],
    scopes: ["repo:read", "community:write"],
  },
  {
    name: "fine-grained community:write",
    args: ["--scopes", "community:write"],
    scopes: ["community:write"],
  },
  {
    name: "fine-grained repo:write",
    args: ["--scopes", "repo:read,repo:write"],
    scopes: ["repo:read", "repo:write"],
  },
];

const OPERATIONS = [
  "list",
  "details",
  "diff",
  "create",
  "close own",
  "comment",
  "edit other's comment",
  "rename other's",
  "close other's",
  "hide other's comment",
  "merge",
] as const;
type Operation = (typeof OPERATIONS)[number];

/** The rules of issue 18, from the access model: nothing here reads the hub's code. */
function expected(
  actor: Actor | null,
  credential: Credential | null,
  repo: Repo,
  operation: Operation,
): boolean {
  const has = (scope: Credential["scopes"][number]) => credential?.scopes.includes(scope) ?? false;
  const owner = repo.owner === "alice" ? actor === "alice" : false;
  const role = repo.owner === "acme" && actor ? ORG_ROLE[actor] : undefined;
  const member = owner || role !== undefined;
  const admin = owner || role === "admin";
  const writer = owner || role === "admin" || role === "write";
  const canSee = !repo.private || member;
  // The seeded discussion and comment are written by the repository's owner (alice) or the org's admin.
  const author = repo.owner === "alice" ? actor === "alice" : actor === "adm";
  switch (operation) {
    case "list":
    case "details":
      if (!repo.private) return true;
      return actor !== null && has("repo:read") && member;
    case "diff":
      if (!repo.private && !repo.gated) return true;
      return actor !== null && has("repo:read") && member;
    case "create":
    case "close own":
    case "comment":
      return actor !== null && has("community:write") && canSee;
    case "edit other's comment":
    case "rename other's":
    case "hide other's comment":
      return actor !== null && has("community:write") && canSee && (author || admin);
    case "close other's":
      return actor !== null && has("community:write") && canSee && (author || writer);
    case "merge":
      return actor !== null && has("repo:write") && writer;
  }
}

describe("who may do what in discussions and pull requests", () => {
  let hub: InProcessHub;
  const tokens = new Map<string, string>();
  const ownerToken = (repo: Repo) =>
    tokens.get(`${repo.owner === "alice" ? "alice" : "adm"}/role write`) ?? "";
  let counter = 0;

  beforeAll(async () => {
    hub = await startInProcessHub({ env: { HUB_RATE_LIMIT: "1000000" } });
    for (const actor of ACTORS) await hub.createUser(actor);
    expect((await hub.cli(["org", "create", "acme", "--owner", "adm"])).code).toBe(0);
    for (const [actor, role] of Object.entries(ORG_ROLE))
      if (actor !== "adm")
        expect((await hub.cli(["org", "add-member", "acme", actor, "--role", role])).code).toBe(0);
    for (const actor of ACTORS)
      for (const credential of CREDENTIALS)
        tokens.set(`${actor}/${credential.name}`, await hub.createToken(actor, credential.args));
    for (const repo of REPOS) {
      const token = ownerToken(repo);
      const created = await hub.request("/api/repos", {
        method: "POST",
        token,
        json: { repo_id: repo.id, private: repo.private },
      });
      expect(created.status).toBe(201);
      if (repo.gated) {
        const gate = await hub.request(`/api/models/${repo.id}/settings`, {
          method: "PUT",
          token,
          json: { gated: "auto" },
        });
        expect(gate.status).toBe(200);
      }
      expect((await commit(token, repo, "main", "seed.txt")).status).toBe(200);
    }
  }, 240_000);
  afterAll(() => hub?.stop());

  function commit(token: string, repo: Repo, rev: string, path: string, query = "") {
    const lines = [
      { key: "header", value: { summary: `Add ${path}` } },
      { key: "file", value: { path, content: Buffer.from(path).toString("base64"), encoding: "base64" } },
    ];
    return hub.request(`/api/models/${repo.id}/commit/${rev}${query}`, {
      method: "POST",
      token,
      headers: { "content-type": "application/x-ndjson" },
      body: lines.map((line) => JSON.stringify(line)).join("\n"),
    });
  }

  /** A discussion with a first comment, and a pull request with one commit, both by the repository's owner. */
  async function seed(repo: Repo) {
    const token = ownerToken(repo);
    const api = `/api/models/${repo.id}/discussions`;
    const { num } = await readJson<{ num: number }>(
      await hub.request(api, { method: "POST", token, json: { title: "Seed", description: "First" } }),
    );
    const details = await readJson<{ events: Array<{ id: string }> }>(
      await hub.request(`${api}/${num}`, { token }),
    );
    const pr = await readJson<{ pullRequestUrl: string }>(
      await commit(token, repo, "main", `pr-${++counter}.txt`, "?create_pr=1"),
    );
    return { num, comment: details.events[0]?.id ?? "", pr: Number(pr.pullRequestUrl.split("/").at(-1)) };
  }

  async function attempt(
    token: string | null,
    repo: Repo,
    operation: Operation,
    seeded: Awaited<ReturnType<typeof seed>>,
  ) {
    const api = `/api/models/${repo.id}/discussions`;
    const auth = token ? { token } : {};
    const post = (path: string, json?: unknown) =>
      hub.request(`${api}${path}`, { method: "POST", ...auth, ...(json === undefined ? {} : { json }) });
    switch (operation) {
      case "list":
        return hub.request(api, auth);
      case "details":
        return hub.request(`${api}/${seeded.num}`, auth);
      case "diff":
        return hub.request(`${api}/${seeded.pr}?diff=1`, auth);
      case "create":
        return post("", { title: "Mine" });
      case "close own": {
        const created = await post("", { title: "Mine to close" });
        if (created.status !== 200) return created;
        const { num } = await readJson<{ num: number }>(created);
        return post(`/${num}/status`, { status: "closed" });
      }
      case "comment":
        return post(`/${seeded.num}/comment`, { comment: "Hello" });
      case "edit other's comment":
        return post(`/${seeded.num}/comment/${seeded.comment}/edit`, { content: "Edited" });
      case "rename other's":
        return post(`/${seeded.num}/title`, { title: `Renamed ${++counter}` });
      case "close other's":
        return post(`/${seeded.num}/status`, { status: "closed" });
      case "hide other's comment":
        return post(`/${seeded.num}/comment/${seeded.comment}/hide`);
      case "merge":
        return post(`/${seeded.pr}/merge`);
    }
  }

  const cases: Array<[string, Actor | null, Credential | null]> = [["anonymous", null, null]];
  for (const actor of ACTORS)
    for (const credential of CREDENTIALS) cases.push([`${actor} with ${credential.name}`, actor, credential]);

  it.each(cases)(
    "%s: every repository and operation answers as the rules say",
    async (_name, actor, credential) => {
      const token = actor && credential ? (tokens.get(`${actor}/${credential.name}`) ?? "") : null;
      const mismatches: string[] = [];
      for (const repo of REPOS) {
        const seeded = await seed(repo);
        for (const operation of OPERATIONS) {
          const want = expected(actor, credential, repo, operation);
          const response = await attempt(token, repo, operation, seeded);
          const got = response.status === 200;
          if (got !== want || (!got && (response.status < 400 || response.status >= 500)))
            mismatches.push(
              `${operation} on ${repo.id}: expected ${want ? "allowed" : "refused"}, got ${response.status}`,
            );
        }
      }
      expect(mismatches).toEqual([]);
    },
  );

  it("hides private repositories' discussions as the repositories themselves are hidden: 404, or 401 anonymously", async () => {
    const repo = REPOS[4];
    const seeded = await seed(repo);
    const api = `/api/models/${repo.id}/discussions/${seeded.num}`;
    expect((await hub.request(api)).status).toBe(401);
    const outsider = await hub.request(api, { token: tokens.get("out/role write") ?? "" });
    expect(outsider.status).toBe(404);
    expect(outsider.headers.get("x-error-code")).toBe("RepoNotFound");
  });
});
