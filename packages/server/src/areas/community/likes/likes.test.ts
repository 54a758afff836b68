import type { ApiError, LikedRepo, LikeState, RepoLiker, UserOverview } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("likes on %s", (dialect) => {
  let hub: InProcessHub;
  const tokens: Record<string, string> = {};
  const passwords: Record<string, string> = {};

  const like = (who: string, repo: string, method = "POST", type = "models") =>
    hub.request(`/api/${type}/${repo}/like`, { method, token: tokens[who] });
  const likers = async (repo: string, token?: string, type = "models") => {
    const response = await hub.request(`/api/${type}/${repo}/likers`, token ? { token } : {});
    expect(response.status, repo).toBe(200);
    return (await readJson<RepoLiker[]>(response)).map((liker) => liker.user);
  };
  const liked = async (handle: string, token?: string) => {
    const response = await hub.request(`/api/users/${handle}/likes`, token ? { token } : {});
    expect(response.status, handle).toBe(200);
    return (await readJson<LikedRepo[]>(response)).map((entry) => `${entry.repo.type}:${entry.repo.name}`);
  };
  /** The count kept in repo_stats, which listings read. */
  const count = async (name: string) => {
    const row = await hub.db
      .selectFrom("repo_stats")
      .innerJoin("repositories", "repositories.id", "repo_stats.repository_id")
      .select("repo_stats.likes")
      .where("repositories.name", "=", name)
      .executeTakeFirst();
    return row?.likes ?? 0;
  };
  const create = async (who: string, json: Record<string, unknown>) => {
    const response = await hub.request("/api/repos/create", { method: "POST", token: tokens[who], json });
    expect(response.status, JSON.stringify(json)).toBe(200);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    for (const handle of ["alice", "bob", "carol", "dave"]) {
      passwords[handle] = (await hub.createUser(handle)).password;
      tokens[handle] = await hub.createToken(handle);
    }
    await create("alice", { name: "bert" });
    await create("alice", { name: "secret", private: true });
    await create("alice", { name: "squad", type: "dataset" });
  });
  afterAll(() => hub?.stop());

  it("likes once however often it is asked, counts exactly, and lists both sides", async () => {
    const first = await like("bob", "alice/bert");
    expect(first.status).toBe(200);
    expect(await readJson<LikeState>(first)).toEqual({ liked: true, likes: 1 });
    expect(await readJson<LikeState>(await like("bob", "alice/bert"))).toEqual({ liked: true, likes: 1 });
    expect(await readJson<LikeState>(await like("carol", "alice/bert"))).toEqual({ liked: true, likes: 2 });
    expect((await like("bob", "alice/squad", "POST", "datasets")).status).toBe(200);
    expect(await count("bert")).toBe(2);
    expect(await likers("alice/bert")).toEqual(["bob", "carol"]);
    expect(await likers("alice/squad", undefined, "datasets")).toEqual(["bob"]);
    expect(await liked("bob")).toEqual(["dataset:alice/squad", "model:alice/bert"]);
    const [entry] = await readJson<LikedRepo[]>(await hub.request("/api/users/bob/likes"));
    expect(entry?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const [liker] = await readJson<RepoLiker[]>(await hub.request("/api/models/alice/bert/likers"));
    expect(liker).toEqual({
      type: "user",
      user: "bob",
      fullname: expect.any(String),
      avatarUrl: `${hub.url}/api/users/bob/avatar`,
    });
  });

  it("unlikes, and unliking again is no error and counts nothing", async () => {
    const response = await like("carol", "alice/bert", "DELETE");
    expect(response.status).toBe(200);
    expect(await readJson<LikeState>(response)).toEqual({ liked: false, likes: 1 });
    expect(await readJson<LikeState>(await like("carol", "alice/bert", "DELETE"))).toEqual({
      liked: false,
      likes: 1,
    });
    expect(await likers("alice/bert")).toEqual(["bob"]);
    expect(await count("bert")).toBe(1);
  });

  it("says whether the caller likes a repository, without a credential too, and hides what it may not read", async () => {
    const state = async (repo: string, token?: string) => {
      const response = await hub.request(`/api/models/${repo}/like`, token ? { token } : {});
      return [response.status, response.status === 200 ? await readJson<LikeState>(response) : null];
    };
    expect(await state("alice/bert", tokens.bob)).toEqual([200, { liked: true, likes: 1 }]);
    expect(await state("alice/bert", tokens.carol)).toEqual([200, { liked: false, likes: 1 }]);
    expect(await state("alice/bert")).toEqual([200, { liked: false, likes: 1 }]);
    expect((await state("alice/secret", tokens.bob))[0]).toBe(404);
    expect(await state("alice/secret", tokens.alice)).toEqual([200, { liked: false, likes: 0 }]);
  });

  it("loses no like when many arrive at once", async () => {
    await create("alice", { name: "popular" });
    const handles = Array.from({ length: 12 }, (_, i) => `fan${i}`);
    for (const handle of handles) {
      await hub.createUser(handle);
      tokens[handle] = await hub.createToken(handle);
    }
    const answers = await Promise.all(
      handles.flatMap((handle) => [like(handle, "alice/popular"), like(handle, "alice/popular")]),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await count("popular")).toBe(12);
    await Promise.all(handles.slice(0, 5).map((handle) => like(handle, "alice/popular", "DELETE")));
    expect(await count("popular")).toBe(7);
    expect((await likers("alice/popular")).sort()).toEqual(handles.slice(5).sort());
  });

  it("shows a private repository's like only to who may read it, and refuses what may not be liked", async () => {
    expect((await like("alice", "alice/secret")).status).toBe(200);
    expect(await liked("alice", tokens.alice)).toEqual(["model:alice/secret"]);
    expect(await liked("alice")).toEqual([]);
    // The overview counts public likes only: alice's one like is of her private repository.
    const overview = async (handle: string) =>
      (await readJson<UserOverview>(await hub.request(`/api/users/${handle}/overview`))).numLikes;
    expect([await overview("alice"), await overview("bob")]).toEqual([0, 2]);
    expect(await liked("alice", tokens.bob)).toEqual([]);
    const hidden = await like("bob", "alice/secret");
    expect(hidden.status).toBe(404);
    expect((await readJson<ApiError>(hidden)).code).toBe("repo_not_found");
    expect((await hub.request("/api/models/alice/secret/likers", { token: tokens.bob })).status).toBe(404);
    expect(await likers("alice/secret", tokens.alice)).toEqual(["alice"]);
    expect((await like("bob", "alice/nothing")).status).toBe(404);
    expect((await hub.request("/api/models/alice/bert/like", { method: "POST" })).status).toBe(401);
    const reader = await hub.createToken("dave", ["--role", "read"]);
    const weak = await hub.request("/api/models/alice/bert/like", { method: "POST", token: reader });
    expect(weak.status).toBe(403);
    expect((await readJson<ApiError>(weak)).code).toBe("insufficient_scope");
    const scoped = await hub.createToken("dave", ["--scopes", "repo:read,community:write"]);
    const allowed = await hub.request("/api/models/alice/bert/like", { method: "POST", token: scoped });
    expect(allowed.status).toBe(200);
    expect((await hub.request("/api/users/nobody/likes")).status).toBe(404);
    expect(await likers("alice/bert")).toEqual(["bob", "dave"]);
  });

  it("pages long lists with a Link header the clients follow", async () => {
    await create("alice", { name: "crowded" });
    const handles = Array.from({ length: 101 }, (_, i) => `crowd${String(i).padStart(3, "0")}`);
    await hub.db
      .insertInto("users")
      .values(
        handles.map((handle) => ({
          id: `id-${handle}`,
          handle,
          email: `${handle}@example.com`,
          email_verified: 1,
          fullname: handle,
          password_hash: null,
          is_admin: 0,
          created_at: "2026-01-01T00:00:00.000Z",
        })),
      )
      .execute();
    const repo = await hub.db
      .selectFrom("repositories")
      .select("id")
      .where("name", "=", "crowded")
      .executeTakeFirstOrThrow();
    await hub.db
      .insertInto("repo_likes")
      .values(
        handles.map((handle) => ({
          repository_id: repo.id,
          user_id: `id-${handle}`,
          created_at: "2026-01-01T00:00:00.000Z",
        })),
      )
      .execute();
    const first = await hub.request("/api/models/alice/crowded/likers");
    const page = await readJson<RepoLiker[]>(first);
    expect(page.map((liker) => liker.user)).toEqual(handles.slice(0, 100));
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1] ?? "";
    expect(next).toContain(`${hub.url}/api/models/alice/crowded/likers?cursor=`);
    const second = await hub.request(next.slice(hub.url.length));
    expect((await readJson<RepoLiker[]>(second)).map((liker) => liker.user)).toEqual([handles[100]]);
    expect(second.headers.get("link")).toBeNull();
  });

  it("forgets the likes of a deleted repository and of a deleted account, and their counts", async () => {
    await create("alice", { name: "gone" });
    expect((await like("carol", "alice/gone")).status).toBe(200);
    expect((await like("carol", "alice/bert")).status).toBe(200);
    expect(await count("bert")).toBe(3);
    const deleted = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: tokens.alice,
      json: { name: "gone", organization: "alice" },
    });
    expect(deleted.status).toBe(204);
    expect(await liked("carol")).toEqual(["model:alice/bert"]);
    await hub.reauthenticate(tokens.carol ?? "", passwords.carol ?? "");
    const gone = await hub.request("/api/me/account", {
      method: "DELETE",
      token: tokens.carol,
      json: { confirm: "carol" },
    });
    expect(gone.status).toBe(200);
    expect(await count("bert")).toBe(2);
    expect(await likers("alice/bert")).toEqual(["bob", "dave"]);
    const left = await hub.db.selectFrom("repo_likes").select("user_id").execute();
    expect(left.some((row) => row.user_id.includes("carol"))).toBe(false);
  });

  it("weighs recent likes in the trending score the listings sort by", async () => {
    await hub.deps.discoveryUpkeep.recompute();
    const score = async (name: string) =>
      (
        await hub.db
          .selectFrom("repo_stats")
          .innerJoin("repositories", "repositories.id", "repo_stats.repository_id")
          .select("repo_stats.trending_score")
          .where("repositories.name", "=", name)
          .executeTakeFirstOrThrow()
      ).trending_score;
    // popular: 7 likes; bert: 2; squad: 1; secret: 1 (its owner's); no likes and no downloads: 0.
    const [popular, bert, squad] = [await score("popular"), await score("bert"), await score("squad")];
    expect(popular).toBeGreaterThan(bert);
    expect(bert).toBeGreaterThan(squad);
    expect(squad).toBeGreaterThan(0);
    expect(bert / squad).toBeCloseTo(2);
    // crowded's 101 likes were given in January: too old to weigh.
    expect(await score("crowded")).toBe(0);
    const listed = await hub.request("/api/models?sort=trendingScore&limit=2");
    expect((await readJson<Array<{ id: string }>>(listed)).map((repo) => repo.id)).toEqual([
      "alice/popular",
      "alice/bert",
    ]);
  });
});
