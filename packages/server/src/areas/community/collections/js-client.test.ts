import { createCollection, deleteCollection, listCollections } from "@huggingface/hub";
import type { Collection } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

/** `@huggingface/hub`'s collection calls: createCollection, listCollections (its Link pages), deleteCollection. */
describe("collections from the official @huggingface/hub client", () => {
  let hub: TestHub;
  let alice: string;

  beforeAll(async () => {
    hub = await startHub();
    await hub.createUser("alice");
    alice = await hub.createToken("alice");
  });
  afterAll(() => hub?.stop());

  it("creates, lists page by page and deletes collections", async () => {
    const slugs: string[] = [];
    for (const n of [1, 2, 3]) {
      const { slug } = await createCollection({
        collection: { title: `Picks ${n}`, namespace: "alice", description: "From JS", private: n === 3 },
        accessToken: alice,
        hubUrl: hub.url,
      });
      expect(slug).toMatch(new RegExp(`^alice/picks-${n}-[0-9a-f]{24}$`));
      slugs.push(slug);
    }
    const listed = async (options: { accessToken?: string; limit?: number } = {}) => {
      const titles: string[] = [];
      for await (const collection of listCollections({
        search: { owner: ["alice"] },
        hubUrl: hub.url,
        ...options,
      }))
        titles.push(collection.title);
      return titles;
    };
    expect(await listed({ accessToken: alice })).toEqual(["Picks 3", "Picks 2", "Picks 1"]);
    expect(await listed()).toEqual(["Picks 2", "Picks 1"]);
    expect(await listed({ accessToken: alice, limit: 2 })).toEqual(["Picks 3", "Picks 2"]);
    // Pages of one, followed through the Link header.
    const pages = await hub.request("/api/collections?owner=alice&limit=1", { token: alice });
    expect(pages.headers.get("link")).toMatch(/rel="next"/);
    await deleteCollection({ slug: slugs[0] ?? "", accessToken: alice, hubUrl: hub.url });
    expect(await listed({ accessToken: alice })).toEqual(["Picks 3", "Picks 2"]);
    const gone = await hub.request(`/api/collections/${slugs[0] ?? ""}`, { token: alice });
    expect(gone.status).toBe(404);
    const kept = await readJson<Collection>(await hub.request(`/api/collections/${slugs[1] ?? ""}`));
    expect(kept).toMatchObject({ title: "Picks 2", description: "From JS", private: false });
  });
});
