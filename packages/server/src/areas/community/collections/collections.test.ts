import type { ApiError, Collection } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("collections on %s", (dialect) => {
  let hub: InProcessHub;
  const tokens: Record<string, string> = {};
  const passwords: Record<string, string> = {};

  const call = (method: string, path: string, who?: string, json?: unknown) =>
    hub.request(path, {
      method,
      ...(who ? { token: tokens[who] } : {}),
      ...(json === undefined ? {} : { json }),
    });
  const refused = async (response: Response, status: number, code: string) => {
    const body = await readJson<ApiError>(response);
    expect({ status: response.status, code: body.code }, body.error).toEqual({ status, code });
    return body;
  };
  const create = async (who: string, json: Record<string, unknown>) => {
    const response = await call("POST", "/api/collections", who, json);
    expect(response.status, JSON.stringify(json)).toBe(200);
    return readJson<Collection>(response);
  };
  const get = async (slug: string, who?: string) => {
    const response = await call("GET", `/api/collections/${slug}`, who);
    expect(response.status, slug).toBe(200);
    return readJson<Collection>(response);
  };
  const add = (slug: string, item: { id: string; type: string }, who = "alice", note?: string) =>
    call("POST", `/api/collections/${slug}/items`, who, { item, ...(note === undefined ? {} : { note }) });
  const listed = async (query: string, who?: string) => {
    const response = await call("GET", `/api/collections${query}`, who);
    expect(response.status, query).toBe(200);
    return readJson<Collection[]>(response);
  };
  const repo = async (who: string, json: Record<string, unknown>) => {
    const response = await call("POST", "/api/repos/create", who, json);
    expect(response.status, JSON.stringify(json)).toBe(200);
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    for (const handle of ["alice", "bob", "carol", "wri", "rea"]) {
      passwords[handle] = (await hub.createUser(handle)).password;
      tokens[handle] = await hub.createToken(handle);
    }
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "wri", "--role", "write"])).code).toBe(0);
    expect((await hub.cli(["org", "add-member", "acme", "rea", "--role", "read"])).code).toBe(0);
    await repo("alice", { name: "bert" });
    await repo("alice", { name: "hidden", private: true });
    await repo("alice", { name: "squad", type: "dataset" });
    await repo("alice", { name: "demo", type: "space", sdk: "static" });
    await repo("alice", { name: "internal", organization: "acme", private: true });
    const paper = await call("POST", "/api/me/paper-submissions", "alice", {
      arxivId: "2106.09685",
      title: "LoRA: Low-Rank Adaptation of Large Language Models",
      authors: ["Edward J. Hu"],
      publishedAt: "2021-06-17",
    });
    expect(paper.status).toBe(201);
  });
  afterAll(() => hub?.stop());

  it("creates a collection with the slug the clients parse, and refuses a title already used", async () => {
    const made = await create("alice", {
      title: "  Recent   Models ",
      namespace: "alice",
      description: "Mine",
    });
    expect(made.slug).toMatch(/^alice\/recent-models-[0-9a-f]{24}$/);
    expect(made).toMatchObject({
      title: "Recent Models",
      description: "Mine",
      private: false,
      items: [],
      position: 0,
      theme: "orange",
      upvotes: 0,
      gating: false,
      owner: { name: "alice", type: "user", avatarUrl: `${hub.url}/api/users/alice/avatar` },
      shareUrl: `${hub.url}/collections/${made.slug}`,
    });
    expect(made.slug.endsWith(made.id)).toBe(true);
    expect(await get(made.slug)).toEqual(made);
    const again = await call("POST", "/api/collections", "alice", {
      title: "recent models",
      namespace: "alice",
    });
    expect(again.status).toBe(409);
    expect(await readJson<{ code: string; slug: string }>(again)).toMatchObject({
      code: "collection_exists",
      slug: made.slug,
    });
    const second = await create("alice", { title: "Ünïcode & more!", namespace: "alice", private: true });
    expect(second.slug).toMatch(/^alice\/unicode-more-[0-9a-f]{24}$/);
    expect(second.position).toBe(1);
  });

  it("makes one collection of a title however many ask for it at once", async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call("POST", "/api/collections", "alice", { title: "Race", namespace: "alice" }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const slugs = await Promise.all(answers.map(async (a) => (await readJson<{ slug: string }>(a)).slug));
    expect(new Set(slugs).size).toBe(1);
    const race = (await listed("?owner=alice&q=race", "alice")).map((c) => c.slug);
    expect(race).toEqual([slugs[0]]);
    expect((await call("DELETE", `/api/collections/${slugs[0] ?? ""}`, "alice")).status).toBe(204);
  });

  it("refuses titles, descriptions and owners it cannot take, by name", async () => {
    const post = (json: unknown, who = "alice") => call("POST", "/api/collections", who, json);
    await refused(await post({ title: "   ", namespace: "alice" }), 400, "invalid_collection_title");
    await refused(await post({ title: "x".repeat(61), namespace: "alice" }), 400, "invalid_collection_title");
    await refused(
      await post({ title: "Long", namespace: "alice", description: "d".repeat(151) }),
      400,
      "collection_description_too_long",
    );
    await refused(
      await post({ title: "Grouped", namespace: "acme", resourceGroupId: "0123456789abcdef01234567" }),
      400,
      "unsupported_parameter",
    );
    await refused(await post({ title: "Nowhere", namespace: "nobody" }), 404, "not_found");
    await refused(await post({ title: "Not mine", namespace: "alice" }, "bob"), 403, "forbidden");
    await refused(await post({ title: "Read only", namespace: "acme" }, "rea"), 403, "forbidden");
    await refused(
      await post({ title: "Extra", namespace: "alice", colour: "red" }),
      400,
      "validation_failed",
    );
    const anonymous = await hub.request("/api/collections", {
      method: "POST",
      json: { title: "A", namespace: "alice" },
    });
    expect(anonymous.status).toBe(401);
    const reader = await hub.createToken("alice", ["--role", "read"]);
    const weak = await hub.request("/api/collections", {
      method: "POST",
      token: reader,
      json: { title: "Weak", namespace: "alice" },
    });
    await refused(weak, 403, "insufficient_scope");
    expect((await listed("?owner=alice", "alice")).map((c) => c.title).sort()).toEqual([
      "Recent Models",
      "Ünïcode & more!",
    ]);
  });

  it("holds items of every kind, in order, with notes, and refuses unknown, duplicate and hidden ones", async () => {
    const { slug } = await create("alice", { title: "Everything", namespace: "alice" });
    const inner = await create("alice", { title: "Inner", namespace: "alice" });
    expect((await add(slug, { id: "alice/bert", type: "model" }, "alice", "The <model>")).status).toBe(200);
    expect((await add(slug, { id: "alice/squad", type: "dataset" })).status).toBe(200);
    expect((await add(slug, { id: "alice/demo", type: "space" })).status).toBe(200);
    expect((await add(slug, { id: "2106.09685", type: "paper" })).status).toBe(200);
    const full = await add(slug, { id: inner.slug, type: "collection" });
    expect(full.status).toBe(200);
    const collection = await readJson<Collection>(full);
    expect(collection.items.map((i) => [i.type, i.id, i.position])).toEqual([
      ["model", "alice/bert", 0],
      ["dataset", "alice/squad", 1],
      ["space", "alice/demo", 2],
      ["paper", "2106.09685", 3],
      ["collection", inner.id, 4],
    ]);
    const [model, , space, paper, nested] = collection.items;
    expect(model).toMatchObject({
      note: { text: "The <model>", html: "The &#60;model&#62;" },
      author: "alice",
      repoType: "model",
      private: false,
      gated: false,
      likes: 0,
      isLikedByUser: false,
    });
    expect(space).toMatchObject({ repoType: "space", sdk: "static" });
    expect(paper).toMatchObject({ title: "LoRA: Low-Rank Adaptation of Large Language Models" });
    expect(nested).toMatchObject({
      slug: inner.slug,
      title: "Inner",
      numberItems: 0,
      owner: { name: "alice" },
    });
    await refused(await add(slug, { id: "alice/bert", type: "model" }), 409, "collection_item_exists");
    await refused(await add(slug, { id: "alice/bert", type: "dataset" }), 404, "unknown_collection_item");
    await refused(await add(slug, { id: "alice/nothing", type: "model" }), 404, "unknown_collection_item");
    await refused(await add(slug, { id: "bert", type: "model" }), 404, "unknown_collection_item");
    await refused(await add(slug, { id: "9999.99999", type: "paper" }), 404, "unknown_collection_item");
    await refused(await add(slug, { id: slug, type: "collection" }), 400, "invalid_collection_item");
    await refused(
      await add(slug, { id: "alice/hidden", type: "model" }, "alice", "n".repeat(501)),
      400,
      "collection_note_too_long",
    );
    await refused(await add(slug, { id: "alice/bert", type: "bucket" }), 400, "validation_failed");
    // bob writes his own collection: alice's private repository does not exist for him.
    const bobs = await create("bob", { title: "Bob's", namespace: "bob" });
    await refused(
      await add(bobs.slug, { id: "alice/hidden", type: "model" }, "bob"),
      404,
      "unknown_collection_item",
    );
    await refused(await add(slug, { id: "alice/squad", type: "model" }, "bob"), 403, "forbidden");
  });

  it("moves items, changes notes, and deletes them", async () => {
    const { slug } = await create("alice", { title: "Ordered", namespace: "alice" });
    for (const name of ["bert", "demo"]) {
      const type = name === "demo" ? "space" : "model";
      expect((await add(slug, { id: `alice/${name}`, type }, "alice", "first")).status).toBe(200);
    }
    expect((await add(slug, { id: "alice/squad", type: "dataset" })).status).toBe(200);
    const items = (await get(slug)).items;
    const [bert, demo, squad] = items.map((item) => item._id);
    const moved = await call("PATCH", `/api/collections/${slug}/items/${bert}`, "alice", {
      position: 5,
      note: "last now",
    });
    expect(moved.status).toBe(200);
    expect((await readJson<Collection>(moved)).items.map((i) => [i._id, i.position, i.note?.text])).toEqual([
      [demo, 0, "first"],
      [squad, 1, undefined],
      [bert, 2, "last now"],
    ]);
    expect(
      (await call("PATCH", `/api/collections/${slug}/items/${squad}`, "alice", { position: 0, note: "" }))
        .status,
    ).toBe(200);
    expect((await get(slug)).items.map((i) => [i._id, i.note])).toEqual([
      [squad, undefined],
      [demo, { text: "first", html: "first" }],
      [bert, { text: "last now", html: "last now" }],
    ]);
    await refused(
      await call("PATCH", `/api/collections/${slug}/items/nothing`, "alice", { note: "x" }),
      404,
      "collection_item_not_found",
    );
    await refused(
      await call("DELETE", `/api/collections/${slug}/items/nothing`, "alice"),
      404,
      "collection_item_not_found",
    );
    await refused(await call("DELETE", `/api/collections/${slug}/items/${demo}`, "bob"), 403, "forbidden");
    expect((await call("DELETE", `/api/collections/${slug}/items/${demo}`, "alice")).status).toBe(204);
    expect((await get(slug)).items.map((i) => [i._id, i.position])).toEqual([
      [squad, 0],
      [bert, 1],
    ]);
  });

  it("changes a collection's title, visibility, theme and place, and keeps the old slug working", async () => {
    const made = await create("carol", { title: "First", namespace: "carol" });
    const other = await create("carol", { title: "Second", namespace: "carol" });
    expect((await add(made.slug, { id: "alice/bert", type: "model" }, "carol")).status).toBe(200);
    const response = await call("PATCH", `/api/collections/${made.slug}`, "carol", {
      title: "First, renamed",
      private: true,
      theme: "pink",
      description: "About",
      position: 1,
    });
    expect(response.status).toBe(200);
    const { success, data } = await readJson<{ success: boolean; data: Collection }>(response);
    expect(success).toBe(true);
    expect(data.slug).toBe(`carol/first-renamed-${made.id}`);
    expect(data).toMatchObject({
      title: "First, renamed",
      private: true,
      theme: "pink",
      description: "About",
      position: 1,
    });
    expect((await get(made.slug, "carol")).slug).toBe(data.slug);
    expect((await get(other.slug, "carol")).position).toBe(0);
    await refused(await call("GET", `/api/collections/${data.slug}`), 401, "unauthenticated");
    await refused(await call("GET", `/api/collections/${data.slug}`, "bob"), 404, "collection_not_found");
    await refused(
      await call("PATCH", `/api/collections/${data.slug}`, "bob", { title: "Mine" }),
      404,
      "collection_not_found",
    );
    await refused(
      await call("PATCH", `/api/collections/${data.slug}`, "carol", { title: "second" }),
      409,
      "collection_exists",
    );
    await refused(
      await call("PATCH", `/api/collections/${data.slug}`, "carol", { theme: "red" }),
      400,
      "validation_failed",
    );
    await refused(
      await call("GET", "/api/collections/carol/first-000000000000000000000000", "bob"),
      404,
      "collection_not_found",
    );
    await refused(await call("GET", "/api/collections/carol/no-id-here", "bob"), 404, "collection_not_found");
    expect((await call("PATCH", `/api/collections/${data.slug}`, "carol", { private: false })).status).toBe(
      200,
    );
    expect((await get(data.slug)).private).toBe(false);
  });

  it("hides from each viewer the items and collections it may not read", async () => {
    const { slug } = await create("alice", { title: "Mixed", namespace: "alice" });
    const secret = await create("alice", { title: "Secret", namespace: "alice", private: true });
    expect((await add(slug, { id: "alice/bert", type: "model" })).status).toBe(200);
    expect((await add(slug, { id: "alice/hidden", type: "model" })).status).toBe(200);
    expect((await add(slug, { id: "acme/internal", type: "model" })).status).toBe(200);
    expect((await add(slug, { id: secret.slug, type: "collection" })).status).toBe(200);
    const ids = async (who?: string) => (await get(slug, who)).items.map((i) => i.id);
    expect(await ids("alice")).toEqual(["alice/bert", "alice/hidden", "acme/internal", secret.id]);
    expect(await ids()).toEqual(["alice/bert"]);
    expect(await ids("bob")).toEqual(["alice/bert"]);
    expect(await ids("rea")).toEqual(["alice/bert", "acme/internal"]);
    const inListing = async (who?: string) =>
      (await listed("?owner=alice&q=mixed", who)).flatMap((c) => c.items.map((i) => i.id));
    expect(await inListing("alice")).toEqual(["alice/bert", "alice/hidden", "acme/internal", secret.id]);
    expect(await inListing()).toEqual(["alice/bert"]);
    expect((await call("POST", "/api/models/alice/bert/like", "bob")).status).toBe(200);
    const [bert] = (await get(slug, "bob")).items;
    expect(bert).toMatchObject({ likes: 1, isLikedByUser: true });
    expect((await get(slug)).items[0]).toMatchObject({ likes: 1, isLikedByUser: false });
  });

  it("lets an organization's writers keep its collections, and its members read the private ones", async () => {
    const made = await create("wri", { title: "Team picks", namespace: "acme", private: true });
    expect(made.owner).toMatchObject({ name: "acme", type: "org" });
    expect((await add(made.slug, { id: "acme/internal", type: "model" }, "wri")).status).toBe(200);
    expect((await get(made.slug, "rea")).items.map((i) => i.id)).toEqual(["acme/internal"]);
    await refused(await add(made.slug, { id: "alice/bert", type: "model" }, "rea"), 403, "forbidden");
    await refused(await call("GET", `/api/collections/${made.slug}`, "bob"), 404, "collection_not_found");
    await refused(await call("DELETE", `/api/collections/${made.slug}`, "bob"), 404, "collection_not_found");
    const bounded = await hub.createToken("wri", ["--role", "write", "--org", "acme"]);
    const ok = await hub.request(`/api/collections/${made.slug}`, {
      method: "PATCH",
      token: bounded,
      json: { theme: "blue" },
    });
    expect(ok.status).toBe(200);
    const outside = await hub.request("/api/collections", {
      method: "POST",
      token: bounded,
      json: { title: "Personal", namespace: "wri" },
    });
    await refused(outside, 403, "outside_token_bounds");
    expect((await listed("?owner=acme", "rea")).map((c) => c.slug)).toEqual([made.slug]);
    expect(await listed("?owner=acme", "bob")).toEqual([]);
    expect(await listed("?owner=acme")).toEqual([]);
  });

  it("lists with the clients' filters, 4 items each and no position, paginated with a Link header", async () => {
    const owner = "bob";
    const made: Collection[] = [];
    for (const title of ["Alpha picks", "Beta picks", "Gamma"])
      made.push(await create(owner, { title, namespace: owner }));
    const [alpha, beta] = made;
    for (const [id, type] of [
      ["alice/bert", "model"],
      ["alice/squad", "dataset"],
      ["alice/demo", "space"],
      ["2106.09685", "paper"],
      [beta?.slug ?? "", "collection"],
    ] as const)
      expect((await add(alpha?.slug ?? "", { id, type }, owner)).status).toBe(200);
    const all = await listed("?owner=bob");
    expect(all.map((c) => c.title)).toEqual(["Alpha picks", "Gamma", "Beta picks", "Bob's"]);
    expect(all[0]?.items.length).toBe(4);
    expect(all.every((c) => !("position" in c))).toBe(true);
    expect((await listed("?owner=bob&q=PICKS")).map((c) => c.title)).toEqual(["Alpha picks", "Beta picks"]);
    expect((await listed("?item=datasets/alice/squad&owner=bob")).map((c) => c.title)).toEqual([
      "Alpha picks",
    ]);
    expect((await listed(`?item=collections/${beta?.slug ?? ""}`)).map((c) => c.title)).toEqual([
      "Alpha picks",
    ]);
    expect((await listed("?item=papers/2106.09685&owner=bob")).map((c) => c.title)).toEqual(["Alpha picks"]);
    expect(await listed("?item=models/alice/nothing")).toEqual([]);
    expect((await listed("?owner=bob&owner=carol")).length).toBe(6);
    const first = await call("GET", "/api/collections?owner=bob&limit=3&sort=lastModified");
    expect((await readJson<Collection[]>(first)).map((c) => c.title)).toEqual([
      "Alpha picks",
      "Gamma",
      "Beta picks",
    ]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1] ?? "";
    expect(next).toContain("limit=3");
    const second = await hub.request(next.slice(hub.url.length));
    expect((await readJson<Collection[]>(second)).map((c) => c.title)).toEqual(["Bob's"]);
    expect(second.headers.get("link")).toBeNull();
    await refused(await call("GET", "/api/collections?sort=newest"), 400, "validation_failed");
  });

  it("deletes collections, and drops items naming a deleted repository, collection or account", async () => {
    const holder = await create("alice", { title: "Holder", namespace: "alice" });
    const inner = await create("carol", { title: "Carol's inner", namespace: "carol" });
    await repo("alice", { name: "doomed" });
    expect((await add(holder.slug, { id: "alice/doomed", type: "model" })).status).toBe(200);
    expect((await add(holder.slug, { id: inner.slug, type: "collection" })).status).toBe(200);
    expect((await add(holder.slug, { id: "alice/bert", type: "model" })).status).toBe(200);
    const deleted = await call("DELETE", "/api/repos/delete", "alice", {
      name: "doomed",
      organization: "alice",
    });
    expect(deleted.status).toBe(204);
    expect((await get(holder.slug)).items.map((i) => i.id)).toEqual([inner.id, "alice/bert"]);
    await hub.reauthenticate(tokens.carol ?? "", passwords.carol ?? "");
    expect((await call("DELETE", "/api/me/account", "carol", { confirm: "carol" })).status).toBe(200);
    expect((await get(holder.slug)).items.map((i) => i.id)).toEqual(["alice/bert"]);
    await refused(await call("GET", `/api/collections/${inner.slug}`, "alice"), 404, "collection_not_found");
    // Anonymous callers learn no more of a missing collection than of a private one.
    await refused(await call("GET", `/api/collections/${inner.slug}`), 401, "unauthenticated");
    await refused(await call("DELETE", `/api/collections/${holder.slug}`, "bob"), 403, "forbidden");
    // As @huggingface/hub's deleteCollection sends it: a JSON content type and no body.
    const emptied = await hub.request(`/api/collections/${holder.slug}`, {
      method: "DELETE",
      token: tokens.alice,
      headers: { "content-type": "application/json" },
      body: "",
    });
    expect(emptied.status).toBe(204);
    await refused(await call("GET", `/api/collections/${holder.slug}`, "alice"), 404, "collection_not_found");
    await refused(
      await call("DELETE", `/api/collections/${holder.slug}`, "alice"),
      404,
      "collection_not_found",
    );
    const positions = (await listed("?owner=alice", "alice")).map((c) => c.title);
    expect(positions).not.toContain("Holder");
  });

  it("documents likes and collections in the OpenAPI document, with the scopes they need", async () => {
    type Operation = { operationId?: string; tags?: string[]; security?: unknown };
    const { paths } = await readJson<{ paths: Record<string, Record<string, Operation>> }>(
      await call("GET", "/api/openapi.json"),
    );
    const collections = paths["/api/collections/{namespace}/{slug}/items"]?.post;
    expect(collections).toMatchObject({ operationId: "collections_add_item", tags: ["Collections"] });
    expect(collections?.security).toEqual([{ bearer: ["community:write"] }]);
    expect(paths["/api/collections"]?.get?.security).toEqual([{}, { bearer: [] }]);
    expect(paths["/api/models/{owner}/{name}/like"]?.post).toMatchObject({
      operationId: "likes_like_model",
      tags: ["Repo Search"],
      security: [{ bearer: ["community:write"] }],
    });
    expect(paths["/api/users/{handle}/likes"]?.get?.operationId).toBe("likes_of_user");
  });
});
