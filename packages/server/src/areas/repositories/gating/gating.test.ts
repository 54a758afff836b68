import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HubApiError, downloadFile } from "@huggingface/hub";
import type {
  AccessRequest,
  ApiError,
  AuthCheck,
  GatedRepositoryList,
  GatedRepositoryRequest,
  RepoInfo,
  RepoListItem,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, lfsGitConfig, sshCommand, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const README = "# Gated weights\n";
const WEIGHTS = randomBytes(150_000);
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe.each(DIALECTS)("gated repositories on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  /** Tokens by name: `<user>` is a write role token, the others say what they are. */
  const t: Record<string, string> = {};
  let daveKey = "";

  const request = (
    pathname: string,
    token?: string,
    init: RequestInit & { json?: unknown } = {},
  ): Promise<Response> => hub.request(pathname, { ...init, ...(token ? { token } : {}) });
  const post = (pathname: string, json: unknown, token?: string) =>
    request(pathname, token, { method: "POST", json });
  const settings = (repo: string, json: unknown, token = t.alice) =>
    request(`/api/models/${repo}/settings`, token, { method: "PUT", json });
  const ask = (repo: string, token?: string, json: unknown = {}) =>
    post(`/api/models/${repo}/ask-access`, json, token);
  const resolve = (repo: string, token?: string, file = "README.md", init: RequestInit = {}) =>
    request(`/${repo}/resolve/main/${file}`, token, init);
  const review = (repo: string, action: "handle" | "grant", json: unknown, token = t.alice) =>
    post(`/api/models/${repo}/user-access-request/${action}`, json, token);
  const code = async (response: Response) => (await readJson<ApiError>(response)).code;

  /** What `huggingface_hub` does in `_list_access_requests`: follow Link pages and read these keys. */
  async function hfListAccessRequests(repo: string, status: string, token = t.alice, query = "") {
    const found = [];
    let url: string | undefined = `${hub.url}/api/models/${repo}/user-access-request/${status}${query}`;
    while (url) {
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      for (const item of await readJson<AccessRequest[]>(response)) {
        found.push({
          username: item.user.user,
          fullname: item.user.fullname,
          email: item.user.email,
          status: item.status,
          timestamp: item.timestamp,
          fields: item.fields,
        });
      }
      url = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
    }
    return found;
  }

  const lfsEnv = () => ({ GIT_CONFIG_GLOBAL: path.join(work, ".gitconfig"), HOME: work });
  const gitLfs = (args: string[], cwd = work, env: Record<string, string> = {}) =>
    git(args, cwd, { ...lfsEnv(), ...env });

  /** Pushes a card and an LFS-tracked file to the repository, as its owner. */
  async function publish(repo: string) {
    const dir = path.join(work, `publish-${repo.replace("/", "-")}`);
    const clone = await gitLfs(["clone", "-q", withToken(`${hub.gitUrl}/${repo}`, t.alice ?? ""), dir]);
    expect(clone.code, clone.stderr).toBe(0);
    writeFileSync(path.join(dir, "README.md"), README);
    writeFileSync(path.join(dir, "weights.bin"), WEIGHTS);
    await gitLfs(["add", "README.md", "weights.bin"], dir);
    await gitLfs(["commit", "-q", "-m", "Weights"], dir);
    const push = await gitLfs(["push", "-q", "origin", "main"], dir);
    expect(push.code, push.stderr).toBe(0);
  }

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-gating-"));
    lfsGitConfig(work, false);
    for (const user of ["alice", "bob", "carol", "dave", "erin", "frank"]) {
      await hub.createUser(user);
      t[user] = await hub.createToken(user);
    }
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "erin", "--role", "read"])).code).toBe(0);
    t.aliceRead = await hub.createToken("alice", ["--role", "read"]);
    t.aliceReview = await hub.createToken("alice", ["--scopes", "repo:write", "--repos", "acme/gated"]);
    t.aliceReviewElsewhere = await hub.createToken("alice", [
      "--scopes",
      "repo:write",
      "--repos",
      "alice/open",
    ]);
    t.aliceFineRead = await hub.createToken("alice", ["--scopes", "repo:read"]);
    t.carolRead = await hub.createToken("carol", ["--role", "read"]);
    t.carolManual = await hub.createToken("carol", ["--scopes", "repo:read", "--repos", "alice/manual"]);
    t.carolAuto = await hub.createToken("carol", ["--scopes", "repo:read", "--repos", "alice/auto"]);
    t.carolInference = await hub.createToken("carol", ["--scopes", "inference:run"]);
    for (const repo of ["alice/auto", "alice/manual", "alice/open", "acme/gated"]) {
      expect((await post("/api/repos", { repo_id: repo }, t.alice)).status).toBe(201);
    }
    await publish("alice/auto");
    await publish("alice/manual");
    expect((await settings("alice/auto", { gated: "auto" })).status).toBe(200);
    expect((await settings("alice/manual", { gated: "manual" })).status).toBe(200);
    expect((await settings("acme/gated", { gated: "manual" })).status).toBe(200);
    const keyFile = path.join(work, "dave_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "dave", "-f", keyFile]);
    daveKey = keyFile;
    const key = await post("/api/me/keys", { key: readFileSync(`${keyFile}.pub`, "utf8") }, t.dave);
    expect(key.status).toBe(201);
    // A hub process, sixteen admin commands and an SSH key: on a loaded 2-core machine that can take a minute.
  }, 180_000);
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("is a repository setting its writers change, and repository info and lists show it", async () => {
    const info = async (repo: string) => readJson<RepoInfo>(await request(`/api/models/${repo}`));
    expect((await info("alice/open")).gated).toBe(false);
    expect((await settings("alice/open", { gated: "manual" })).status).toBe(200);
    expect((await info("alice/open")).gated).toBe("manual");
    const listed = await readJson<RepoListItem[]>(await request("/api/models?author=alice"));
    expect(Object.fromEntries(listed.map((item) => [item.id, item.gated]))).toEqual({
      "alice/auto": "auto",
      "alice/manual": "manual",
      "alice/open": "manual",
    });
    // Hugging Face's wire: gated false ends gating; private and gated travel together.
    expect((await settings("alice/open", { gated: false, private: false })).status).toBe(200);
    expect((await info("alice/open")).gated).toBe(false);

    expect((await settings("alice/open", { gated: "auto" }, "")).status).toBe(401);
    const outsider = await settings("alice/open", { gated: "auto" }, t.bob);
    expect(outsider.status).toBe(403);
    expect((await settings("alice/open", { gated: "auto" }, t.aliceRead)).status).toBe(403);
    expect(await code(await settings("alice/open", { gated: "auto" }, t.aliceFineRead))).toBe(
      "insufficient_scope",
    );
    for (const gated of ["yes", true, 1, null, "Manual"]) {
      const refused = await settings("alice/open", { gated });
      expect(refused.status, String(gated)).toBe(400);
      expect((await readJson<ApiError>(refused)).field).toBe("gated");
    }
    expect((await info("alice/open")).gated).toBe(false);
  });

  it("auto mode: metadata stays visible, files need a request, which is accepted at once", async () => {
    const anonymous = await resolve("alice/auto");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-error-code")).toBe("GatedRepo");
    const refused = await resolve("alice/auto", t.bob);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("x-error-code")).toBe("GatedRepo");
    const error = await readJson<ApiError>(refused);
    expect(error.code).toBe("gated_repo");
    expect(error.error).toContain("POST /api/models/alice/auto/ask-access");
    for (const [file, mode, init] of [
      ["README.md", "raw", {}],
      ["weights.bin", "resolve", { headers: { range: "bytes=0-9" } }],
      ["weights.bin", "resolve", { method: "HEAD" }],
    ] as const) {
      const response = await request(`/alice/auto/${mode}/main/${file}`, t.bob, init);
      expect(response.status, `${mode} ${file}`).toBe(403);
      expect(response.headers.get("x-error-code")).toBe("GatedRepo");
    }
    for (const metadata of [
      "/api/models/alice/auto",
      "/api/models/alice/auto/tree/main",
      "/api/models/alice/auto/revision/main",
    ]) {
      expect((await request(metadata, t.bob)).status, metadata).toBe(200);
      expect((await request(metadata)).status, metadata).toBe(200);
    }
    const paths = await post("/api/models/alice/auto/paths-info/main", { paths: ["weights.bin"] }, t.bob);
    expect(await readJson<Array<{ lfs?: { oid: string } }>>(paths)).toMatchObject([
      { lfs: { oid: sha256(WEIGHTS) } },
    ]);

    // huggingface_hub's auth_check: GatedRepo until the request is made.
    const authCheck = (token?: string, write = "") =>
      request(`/api/models/alice/auto/auth-check${write}`, token);
    expect((await authCheck()).headers.get("x-error-code")).toBe("GatedRepo");
    const unchecked = await authCheck(t.bob);
    expect(unchecked.status).toBe(403);
    expect(unchecked.headers.get("x-error-code")).toBe("GatedRepo");
    expect(await readJson<AuthCheck>(await authCheck(t.alice, "/write"))).toEqual({
      id: "alice/auto",
      gated: "auto",
      access: "write",
    });

    // The official JS client sees the refusal, then downloads once access is granted.
    const client = { repo: { type: "model" as const, name: "alice/auto" }, hubUrl: hub.url };
    const failure = await downloadFile({ ...client, path: "README.md", accessToken: t.bob }).catch(
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(HubApiError);
    expect((failure as HubApiError).statusCode).toBe(403);
    expect((failure as HubApiError).message).toContain("ask-access");

    const asked = await ask("alice/auto", t.bob, {
      fields: { affiliation: "Example Labs", "intended use": "evaluation", commercial: false, year: 2026 },
    });
    expect(asked.status).toBe(201);
    const request1 = await readJson<GatedRepositoryRequest>(asked);
    expect(request1).toMatchObject({
      repoType: "model",
      repoId: "alice/auto",
      gated: "auto",
      status: "accepted",
      rejectionReason: null,
      fields: { affiliation: "Example Labs", "intended use": "evaluation", commercial: false, year: 2026 },
    });
    expect(request1.decidedAt).toBe(request1.requestedAt);
    const readme = await downloadFile({ ...client, path: "README.md", accessToken: t.bob });
    expect(await readme?.text()).toBe(README);
    const weights = await downloadFile({ ...client, path: "weights.bin", accessToken: t.bob });
    expect(sha256(new Uint8Array((await weights?.arrayBuffer()) ?? new ArrayBuffer(0)))).toBe(
      sha256(WEIGHTS),
    );
    expect((await resolve("alice/auto")).status).toBe(401);
    expect(await readJson<AuthCheck>(await authCheck(t.bob))).toMatchObject({ access: "read" });
    expect((await authCheck(t.bob, "/write")).status).toBe(403);

    const again = await ask("alice/auto", t.bob);
    expect(again.status).toBe(409);
    expect(await code(again)).toBe("access_already_granted");
    const withdraw = await request("/api/models/alice/auto/ask-access", t.bob, { method: "DELETE" });
    expect(withdraw.status).toBe(409);
    expect(await code(withdraw)).toBe("access_request_decided");
    expect(await hfListAccessRequests("alice/auto", "accepted")).toEqual([
      {
        username: "bob",
        fullname: "bob",
        email: "bob@example.com",
        status: "accepted",
        timestamp: request1.requestedAt,
        fields: request1.fields,
      },
    ]);
  });

  it("manual mode: requests wait for review; writers accept, reject and reset them with huggingface_hub's calls", async () => {
    const asked = await ask("alice/manual", t.carol, { fields: { reason: "evaluation" } });
    expect(asked.status).toBe(201);
    expect(await readJson<GatedRepositoryRequest>(asked)).toMatchObject({
      status: "pending",
      gated: "manual",
      decidedAt: null,
    });
    const waiting = await resolve("alice/manual", t.carol);
    expect(waiting.status).toBe(403);
    expect(waiting.headers.get("x-error-code")).toBe("GatedRepo");
    expect((await readJson<ApiError>(waiting)).error).toMatch(/awaits review/);
    expect(await code(await ask("alice/manual", t.carol))).toBe("access_request_pending");

    const pending = await hfListAccessRequests("alice/manual", "pending");
    expect(pending).toEqual([
      {
        username: "carol",
        fullname: "carol",
        email: "carol@example.com",
        status: "pending",
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        fields: { reason: "evaluation" },
      },
    ]);

    // The requester withdraws, and asks again without answers.
    const withdraw = () => request("/api/models/alice/manual/ask-access", t.carol, { method: "DELETE" });
    expect((await withdraw()).status).toBe(204);
    expect(await hfListAccessRequests("alice/manual", "pending")).toEqual([]);
    const gone = await withdraw();
    expect(gone.status).toBe(404);
    expect(await code(gone)).toBe("access_request_not_found");
    expect((await ask("alice/manual", t.carol)).status).toBe(201);
    expect((await hfListAccessRequests("alice/manual", "pending"))[0]?.fields).toBeUndefined();

    // reject_access_request, with a reason the requester reads.
    const rejected = await review("alice/manual", "handle", {
      user: "carol",
      status: "rejected",
      rejectionReason: "Evaluation only for partners.",
    });
    expect(rejected.status).toBe(200);
    expect(await readJson<AccessRequest>(rejected)).toMatchObject({
      user: { user: "carol" },
      status: "rejected",
      rejectionReason: "Evaluation only for partners.",
    });
    const refused = await resolve("alice/manual", t.carol);
    expect(refused.status).toBe(403);
    expect((await readJson<ApiError>(refused)).error).toMatch(/rejected your request/);
    const askAgain = await ask("alice/manual", t.carol);
    expect(askAgain.status).toBe(403);
    expect(await code(askAgain)).toBe("access_request_rejected");
    expect((await withdraw()).status).toBe(409);
    const mine = await readJson<GatedRepositoryList>(await request("/api/me/gated-repositories", t.carol));
    expect(mine.requests).toEqual([
      expect.objectContaining({
        repoId: "alice/manual",
        status: "rejected",
        rejectionReason: "Evaluation only for partners.",
        decidedAt: expect.any(String),
      }),
    ]);
    expect((await hfListAccessRequests("alice/manual", "rejected")).map((r) => r.username)).toEqual([
      "carol",
    ]);

    // accept_access_request: each of carol's tokens downloads within its bounds.
    const accepted = await review("alice/manual", "handle", { user: "carol", status: "accepted" });
    expect(accepted.status).toBe(200);
    expect(await readJson<AccessRequest>(accepted)).toMatchObject({
      status: "accepted",
      rejectionReason: null,
    });
    for (const token of [t.carol, t.carolRead, t.carolManual]) {
      const ok = await resolve("alice/manual", token);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe(README);
    }
    const outOfBounds = await resolve("alice/manual", t.carolAuto);
    expect(outOfBounds.status).toBe(403);
    expect(await code(outOfBounds)).toBe("outside_token_bounds");
    const scopeless = await resolve("alice/manual", t.carolInference);
    expect(scopeless.status).toBe(403);
    expect(await code(scopeless)).toBe("insufficient_scope");
    const unchanged = await review("alice/manual", "handle", { user: "carol", status: "accepted" });
    expect(unchanged.status).toBe(409);
    expect(await code(unchanged)).toBe("access_request_unchanged");

    // cancel_access_request: back to pending, and the very next download is refused.
    expect((await review("alice/manual", "handle", { user: "carol", status: "pending" })).status).toBe(200);
    expect((await resolve("alice/manual", t.carol)).status).toBe(403);
    expect((await hfListAccessRequests("alice/manual", "pending")).map((r) => r.username)).toEqual(["carol"]);

    const stranger = await review("alice/manual", "handle", { user: "nobody", status: "accepted" });
    expect(stranger.status).toBe(404);
    const unasked = await review("alice/manual", "handle", { user: "erin", status: "accepted" });
    expect(unasked.status).toBe(404);
    expect(await code(unasked)).toBe("access_request_not_found");

    // huggingface_hub 2 names the request by the requestId the lists show, instead of the username.
    const listing = await request("/api/models/alice/manual/user-access-request/pending", t.alice);
    const requestId = (await readJson<AccessRequest[]>(listing))[0]?.requestId ?? "";
    expect(requestId).not.toBe("");
    const byId = await review("alice/manual", "handle", { requestId, status: "rejected" });
    expect(byId.status).toBe(200);
    expect(await readJson<AccessRequest>(byId)).toMatchObject({
      requestId,
      user: { user: "carol" },
      status: "rejected",
    });
    expect((await resolve("alice/manual", t.carol)).status).toBe(403);
    expect((await review("alice/manual", "handle", { requestId, status: "pending" })).status).toBe(200);
    for (const named of [{ user: "carol", requestId }, {}]) {
      const ambiguous = await review("alice/manual", "handle", { ...named, status: "accepted" });
      expect(ambiguous.status).toBe(400);
      expect(await code(ambiguous)).toBe("invalid_access_request_handle");
    }
    const unknownId = await review("alice/manual", "handle", {
      requestId: "no-such-request",
      status: "accepted",
    });
    expect(unknownId.status).toBe(404);
    expect(await code(unknownId)).toBe("access_request_not_found");
    expect((await hfListAccessRequests("alice/manual", "pending")).map((r) => r.username)).toEqual(["carol"]);

    // Switching to auto accepts what waits for review; the decisions stay when gating goes off and on.
    expect((await ask("alice/manual", t.bob)).status).toBe(201);
    expect((await settings("alice/manual", { gated: "auto" })).status).toBe(200);
    expect(await hfListAccessRequests("alice/manual", "pending")).toEqual([]);
    expect((await resolve("alice/manual", t.carol)).status).toBe(200);
    const page = await request("/api/models/alice/manual/user-access-request/accepted?limit=1", t.alice);
    expect(await readJson<AccessRequest[]>(page)).toHaveLength(1);
    expect(page.headers.get("link")).toMatch(/^<http:\/\/[^>]+cursor=[^>]+>; rel="next"$/);
    expect((await hfListAccessRequests("alice/manual", "accepted", t.alice, "?limit=1")).length).toBe(2);
    expect((await settings("alice/manual", { gated: false })).status).toBe(200);
    expect((await resolve("alice/manual", t.frank)).status).toBe(200);
    expect(await code(await ask("alice/manual", t.frank))).toBe("repo_not_gated");
    expect((await settings("alice/manual", { gated: "manual" })).status).toBe(200);
    expect((await resolve("alice/manual", t.carol)).status).toBe(200);
    expect((await resolve("alice/manual", t.frank)).status).toBe(403);
    expect((await review("alice/manual", "handle", { user: "bob", status: "rejected" })).status).toBe(200);
  });

  it("guards git clones and Git LFS over HTTPS, and signed LFS URLs, until accepted and again once revoked", async () => {
    const cloneAs = (token: string | null, dir: string) =>
      gitLfs([
        "clone",
        "-q",
        token ? withToken(`${hub.gitUrl}/alice/manual`, token) : `${hub.gitUrl}/alice/manual`,
        dir,
      ]);
    const refused = await cloneAs(t.frank ?? "", "frank-refused");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("POST /api/models/alice/manual/ask-access");
    expect((await cloneAs(null, "anonymous-refused")).code).not.toBe(0);
    expect((await ask("alice/manual", t.frank)).status).toBe(201);
    const pending = await cloneAs(t.frank ?? "", "frank-pending");
    expect(pending.code).not.toBe(0);
    expect(pending.stderr).toMatch(/awaits review/);

    // git-lfs in a checkout made without LFS content (by the owner), fetching with frank's token.
    const lfsDir = path.join(work, "frank-lfs");
    const skip = await gitLfs(
      ["clone", "-q", withToken(`${hub.gitUrl}/alice/manual`, t.alice ?? ""), lfsDir],
      work,
      {
        GIT_LFS_SKIP_SMUDGE: "1",
      },
    );
    expect(skip.code, skip.stderr).toBe(0);
    await gitLfs(
      ["remote", "set-url", "origin", withToken(`${hub.gitUrl}/alice/manual`, t.frank ?? "")],
      lfsDir,
    );
    const lfsRefused = await gitLfs(["lfs", "pull", "origin"], lfsDir);
    expect(lfsRefused.code).not.toBe(0);
    expect(readFileSync(path.join(lfsDir, "weights.bin"), "utf8")).toContain("git-lfs.github.com/spec");
    const batch = (token: string, operation = "download") =>
      fetch(`${hub.gitUrl}/alice/manual.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: {
          accept: "application/vnd.git-lfs+json",
          "content-type": "application/vnd.git-lfs+json",
          authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}`,
        },
        body: JSON.stringify({
          operation,
          transfers: ["basic"],
          objects: [{ oid: sha256(WEIGHTS), size: WEIGHTS.length }],
        }),
      });
    const batchRefused = await batch(t.frank ?? "");
    expect(batchRefused.status).toBe(403);
    expect(((await batchRefused.json()) as { message: string }).message).toMatch(/awaits review/);
    // Writers still upload.
    expect((await batch(t.alice ?? "", "upload")).status).toBe(200);

    expect((await review("alice/manual", "handle", { user: "frank", status: "accepted" })).status).toBe(200);
    const cloned = await cloneAs(t.frank ?? "", "frank-accepted");
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(sha256(readFileSync(path.join(work, "frank-accepted", "weights.bin")))).toBe(sha256(WEIGHTS));
    const lfsPulled = await gitLfs(["lfs", "pull", "origin"], lfsDir);
    expect(lfsPulled.code, lfsPulled.stderr).toBe(0);
    expect(sha256(readFileSync(path.join(lfsDir, "weights.bin")))).toBe(sha256(WEIGHTS));

    // A download URL the batch API signed is checked again when used: revocation stops it.
    const granted = (await (await batch(t.frank ?? "")).json()) as {
      objects: Array<{ actions: { download: { href: string } } }>;
    };
    const href = granted.objects[0]?.actions.download.href ?? "";
    const object = await fetch(href);
    expect(object.status).toBe(200);
    expect(sha256(new Uint8Array(await object.arrayBuffer()))).toBe(sha256(WEIGHTS));
    expect((await review("alice/manual", "handle", { user: "frank", status: "rejected" })).status).toBe(200);
    expect((await fetch(href)).status).toBe(403);
    const revoked = await git(["fetch", "-q", "origin"], path.join(work, "frank-accepted"));
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toMatch(/rejected your request/);
  });

  it("guards SSH clones the same way; writers grant access to someone who did not ask", async () => {
    const ssh = sshCommand(daveKey);
    const sshClone = (dir: string) =>
      git(["clone", "-q", `${hub.sshUrl}/alice/manual.git`, dir], work, {
        GIT_SSH_COMMAND: ssh,
      });
    const refused = await sshClone("dave-refused");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("POST /api/models/alice/manual/ask-access");

    const granted = await review("alice/manual", "grant", { user: "dave" });
    expect(granted.status).toBe(200);
    expect(await readJson<AccessRequest>(granted)).toMatchObject({
      user: { user: "dave", email: "dave@example.com" },
      status: "accepted",
    });
    const cloned = await sshClone("dave-granted");
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(readFileSync(path.join(work, "dave-granted", "README.md"), "utf8")).toBe(README);
    const twice = await review("alice/manual", "grant", { user: "dave" });
    expect(twice.status).toBe(409);
    expect(await code(twice)).toBe("access_already_granted");
    expect((await review("alice/manual", "grant", { user: "nobody" })).status).toBe(404);

    expect((await review("alice/manual", "handle", { user: "dave", status: "rejected" })).status).toBe(200);
    const revoked = await sshClone("dave-revoked");
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toMatch(/rejected your request/);
    // Granting overrides a rejection.
    expect((await review("alice/manual", "grant", { user: "dave" })).status).toBe(200);
    expect((await resolve("alice/manual", t.dave)).status).toBe(200);
  });

  it("lets organization members download without asking, and the organization's writers review", async () => {
    const member = await resolve("acme/gated", t.erin, ".gitattributes");
    expect(member.status).toBe(200);
    const needless = await ask("acme/gated", t.erin);
    expect(needless.status).toBe(409);
    expect(await code(needless)).toBe("access_not_needed");
    expect((await resolve("acme/gated", t.bob, ".gitattributes")).status).toBe(403);
    expect((await ask("acme/gated", t.bob)).status).toBe(201);

    const list = (token?: string) => request("/api/models/acme/gated/user-access-request/pending", token);
    expect((await list(t.alice)).status).toBe(200);
    expect((await list(t.aliceReview)).status).toBe(200);
    expect(await code(await list(t.aliceReviewElsewhere))).toBe("outside_token_bounds");
    for (const token of [t.erin, t.bob, t.aliceRead, t.aliceFineRead]) {
      expect((await list(token)).status).toBe(403);
    }
    expect(await code(await list(t.aliceFineRead))).toBe("insufficient_scope");
    expect((await list()).status).toBe(401);
    for (const token of [t.erin, t.aliceRead]) {
      expect((await review("acme/gated", "handle", { user: "bob", status: "accepted" }, token)).status).toBe(
        403,
      );
      expect((await review("acme/gated", "grant", { user: "frank" }, token)).status).toBe(403);
    }
    const accepted = await review("acme/gated", "handle", { user: "bob", status: "accepted" }, t.aliceReview);
    expect(accepted.status).toBe(200);
    expect((await resolve("acme/gated", t.bob, ".gitattributes")).status).toBe(200);
  });

  it("lists the caller's requests with the settings-read rules, leaving out repositories it can no longer read", async () => {
    const mine = (token?: string) => request("/api/me/gated-repositories", token);
    const list = await readJson<GatedRepositoryList>(await mine(t.bob));
    expect(list.requests.map((r) => [r.repoId, r.gated, r.status])).toEqual([
      ["acme/gated", "manual", "accepted"],
      ["alice/manual", "manual", "rejected"],
      ["alice/auto", "auto", "accepted"],
    ]);
    expect(list.requests[2]?.fields).toMatchObject({ affiliation: "Example Labs" });
    expect((await mine(t.carolRead)).status).toBe(200);
    expect((await mine()).status).toBe(401);
    const fineGrained = await mine(t.carolManual);
    expect(fineGrained.status).toBe(403);
    expect(await code(fineGrained)).toBe("insufficient_scope");

    expect((await settings("alice/auto", { private: true })).status).toBe(200);
    const hidden = await readJson<GatedRepositoryList>(await mine(t.bob));
    expect(hidden.requests.map((r) => r.repoId)).toEqual(["acme/gated", "alice/manual"]);
    expect((await settings("alice/auto", { private: false })).status).toBe(200);
  });

  it("needs a gated repository for asking and reviewing", async () => {
    for (const response of [
      await ask("alice/open", t.bob),
      await request("/api/models/alice/open/user-access-request/pending", t.alice),
      await review("alice/open", "handle", { user: "bob", status: "accepted" }),
      await review("alice/open", "grant", { user: "bob" }),
    ]) {
      expect(response.status).toBe(400);
      expect(await code(response)).toBe("repo_not_gated");
    }
    expect((await ask("alice/missing", t.bob)).status).toBe(404);
    expect((await request("/api/models/alice/missing/user-access-request/pending", t.alice)).status).toBe(
      404,
    );
  });

  it("answers 401 without a token and 403 to tokens that may not ask", async () => {
    for (const response of [
      await ask("alice/manual"),
      await request("/api/models/alice/manual/ask-access", undefined, { method: "DELETE" }),
      await request("/api/models/alice/manual/user-access-request/pending"),
      await review("alice/manual", "handle", { user: "bob", status: "accepted" }, ""),
      await review("alice/manual", "grant", { user: "bob" }, ""),
    ]) {
      expect(response.status).toBe(401);
    }
    const scopeless = await ask("alice/manual", t.carolInference);
    expect(scopeless.status).toBe(403);
    expect(await code(scopeless)).toBe("insufficient_scope");
    expect(await code(await ask("alice/manual", t.carolAuto))).toBe("outside_token_bounds");
  });

  it("refuses every bad field with a 400 naming it", async () => {
    const cases: Array<[Promise<Response>, string]> = [
      [ask("alice/manual", t.erin, { fields: "evaluation" }), "fields"],
      [ask("alice/manual", t.erin, { fields: ["evaluation"] }), "fields"],
      [ask("alice/manual", t.erin, { fields: { "": "x" } }), "fields"],
      [ask("alice/manual", t.erin, { fields: { "bad/name": "x" } }), "fields.bad/name"],
      [ask("alice/manual", t.erin, { fields: { ["n".repeat(65)]: "x" } }), `fields.${"n".repeat(65)}`],
      [ask("alice/manual", t.erin, { fields: { reason: "x".repeat(2001) } }), "fields.reason"],
      [ask("alice/manual", t.erin, { fields: { reason: { nested: true } } }), "fields.reason"],
      [ask("alice/manual", t.erin, { fields: { reason: null } }), "fields.reason"],
      [
        ask("alice/manual", t.erin, {
          fields: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`q${i}`, "a"])),
        }),
        "fields",
      ],
      [review("alice/manual", "handle", { status: "accepted" }), "user"],
      [review("alice/manual", "handle", { requestId: "", status: "accepted" }), "requestId"],
      [review("alice/manual", "handle", { user: "Bob!", status: "accepted" }), "user"],
      [review("alice/manual", "handle", { user: 5, status: "accepted" }), "user"],
      [review("alice/manual", "handle", { user: "bob" }), "status"],
      [review("alice/manual", "handle", { user: "bob", status: "approved" }), "status"],
      [
        review("alice/manual", "handle", { user: "bob", status: "rejected", rejectionReason: "" }),
        "rejectionReason",
      ],
      [
        review("alice/manual", "handle", {
          user: "bob",
          status: "rejected",
          rejectionReason: "r".repeat(201),
        }),
        "rejectionReason",
      ],
      [
        review("alice/manual", "handle", { user: "bob", status: "rejected", rejectionReason: 7 }),
        "rejectionReason",
      ],
      [
        review("alice/manual", "handle", { user: "bob", status: "accepted", rejectionReason: "why" }),
        "rejectionReason",
      ],
      [review("alice/manual", "grant", {}), "user"],
      [review("alice/manual", "grant", { user: "-bob" }), "user"],
      [request("/api/models/alice/manual/user-access-request/approved", t.alice), "status"],
      [request("/api/models/alice/manual/user-access-request/pending?limit=0", t.alice), "limit"],
      [request("/api/models/alice/manual/user-access-request/pending?limit=many", t.alice), "limit"],
    ];
    for (const [pending, field] of cases) {
      const response = await pending;
      expect(response.status, field).toBe(400);
      expect((await readJson<ApiError>(response)).field, field).toBe(field);
    }
    for (const body of [[], "x", null]) expect((await ask("alice/manual", t.erin, body)).status).toBe(400);
    expect((await review("alice/manual", "handle", [])).status).toBe(400);
    // Nothing above was stored.
    expect(await hfListAccessRequests("alice/manual", "pending")).toEqual([]);
  });

  it("documents the operations with their request and response schemas", async () => {
    const doc = (await (await request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const op = (pathname: string, method: string) => doc.paths[pathname]?.[method];
    expect(op("/api/me/gated-repositories", "get")?.operationId).toBe("account_gated_repositories_list");
    expect(JSON.stringify(op("/api/me/gated-repositories", "get")?.responses)).toContain("rejectionReason");
    const api = "/api/models/{owner}/{name}";
    const ask = op(`${api}/ask-access`, "post");
    expect(ask?.operationId).toBe("repos_access_request_create_model");
    expect(JSON.stringify(ask?.requestBody)).toContain("fields");
    expect(op(`${api}/ask-access`, "delete")?.operationId).toBe("repos_access_request_cancel_model");
    const list = op(`${api}/user-access-request/{status}`, "get");
    expect(list?.operationId).toBe("repos_access_requests_list_model");
    expect(JSON.stringify(list?.responses)).toContain("fullname");
    const handle = op(`${api}/user-access-request/handle`, "post");
    expect(handle?.operationId).toBe("repos_access_request_handle_model");
    expect(JSON.stringify(handle?.requestBody)).toContain("rejectionReason");
    expect(op(`${api}/user-access-request/grant`, "post")?.operationId).toBe(
      "repos_access_request_grant_model",
    );
    expect(JSON.stringify(op(`${api}/settings`, "put")?.requestBody)).toContain("manual");
    expect(JSON.stringify(op(api, "get")?.responses)).toContain("gated");
    expect(op(`${api}/auth-check`, "get")?.operationId).toBe("repos_auth_check_model");
    expect(op(`${api}/auth-check/write`, "get")?.operationId).toBe("repos_auth_check_write_model");
  });
});
