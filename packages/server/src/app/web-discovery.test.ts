import type { Collection, LikeState } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { commitFiles, pageText, postForm } from "../test-support/web.js";

/** A safetensors file: its header (two tensors, F32 and BF16, 10,100 parameters) and zeroed data. */
function safetensors(): Buffer {
  const header = Buffer.from(
    JSON.stringify({
      a: { dtype: "F32", shape: [100, 100], data_offsets: [0, 40000] },
      b: { dtype: "BF16", shape: [100], data_offsets: [40000, 40200] },
    }),
  );
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([size, header, Buffer.alloc(40200)]);
}

const card = (front: string, text: string) => `---\n${front}\n---\n# Card\n\n${text}\n`;

/**
 * Discovery on the web site, driven as a browser without JavaScript drives it: listing filters, sorts and
 * search; the repository page's likes, downloads, parameters, model tree, card problems and collections; the
 * collection pages and their forms; the home page's trending and recommendations. The browser journey (the
 * like button and a collection, with JavaScript) is in web-discovery.browser.test.ts.
 */
describe("discovery pages", () => {
  let hub: InProcessHub;
  let alice: string;
  let bob: string;
  let aliceCookie: string;
  let bobCookie: string;

  /** The page's text with tags and Svelte's comments dropped and entities read. */
  const visible = async (path: string, cookie?: string) =>
    (await pageText(hub, path, { cookie }))
      .replace(/<!--[^>]*-->/g, "")
      .replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, "")
      .replace(/<[^>]+>/g, " ")
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&gt;/g, ">")
      .replace(/&lt;/g, "<")
      .replace(/&amp;/g, "&")
      .replace(/\s+/g, " ");
  const html = (path: string, cookie?: string) => pageText(hub, path, { cookie });
  /** The repositories a listing page shows, in order. */
  const listed = async (path: string, cookie?: string) =>
    [...(await html(path, cookie)).matchAll(/class="name[^"]*"[^>]*>([^<]+)</g)].map((m) => m[1]);
  const likes = async (repo: string) =>
    (await readJson<LikeState>(await hub.request(`/api/models/${repo}/like`, { token: bob }))).likes;

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password: alicePassword } = await hub.createUser("alice");
    const { password: bobPassword } = await hub.createUser("bob");
    alice = await hub.createToken("alice");
    bob = await hub.createToken("bob");
    aliceCookie = await hub.signIn("alice", alicePassword);
    bobCookie = await hub.signIn("bob", bobPassword);
    for (const [repo_id, repo_type] of [
      ["alice/base", "model"],
      ["alice/tuned", "model"],
      ["alice/quant", "model"],
      ["alice/broken", "model"],
      ["alice/corpus", "dataset"],
    ]) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id, repo_type },
      });
      expect(created.status).toBe(201);
    }
    await commitFiles(hub, alice, "alice/base", {
      "README.md": card(
        "pipeline_tag: text-generation\nlibrary_name: transformers\nlanguage: en\nlicense: apache-2.0",
        "A base model that knows about quokkas.",
      ),
      "model.safetensors": safetensors(),
    });
    await commitFiles(hub, alice, "alice/tuned", {
      "README.md": card(
        "pipeline_tag: text-generation\nlanguage: fr\nlicense: mit\nbase_model: alice/base",
        "Tuned for French.",
      ),
    });
    await commitFiles(hub, alice, "alice/quant", {
      "README.md": card("base_model: alice/base\nbase_model_relation: quantized", "Smaller."),
    });
    await commitFiles(hub, alice, "alice/broken", {
      "README.md": "---\nlicense: [unclosed\n---\n# Broken\n",
    });
  });
  afterAll(() => hub?.stop());

  it("filters listings by task, library, language, license, size and tag, searches cards, and keeps the other parameters", async () => {
    expect((await listed("/models?task=text-generation&sort=name")).sort()).toEqual([
      "alice/base",
      "alice/tuned",
    ]);
    expect(await listed("/models?library=transformers")).toEqual(["alice/base"]);
    expect(await listed("/models?language=fr")).toEqual(["alice/tuned"]);
    expect(await listed("/models?license=mit")).toEqual(["alice/tuned"]);
    expect(await listed("/models?size=small")).toEqual(["alice/base"]);
    expect(await listed("/models?size=large")).toEqual([]);
    expect(await listed("/models?search=quokkas")).toEqual(["alice/base"]);
    expect(await listed("/models?filter=base_model:quantized:alice/base")).toEqual(["alice/quant"]);
    expect(await listed("/models?sort=name")).toEqual([
      "alice/base",
      "alice/broken",
      "alice/quant",
      "alice/tuned",
    ]);
    expect(await listed("/datasets")).toEqual(["alice/corpus"]);
    // Each entry shows its task and parameters; the filters in force can each be taken off, keeping the rest.
    const both = await html("/models?task=text-generation&language=en&sort=likes");
    expect(both).toContain("10.1K");
    expect(both).toMatch(/class="task[^"]*">text-generation</);
    expect(both).toContain('href="?task=text-generation&amp;sort=likes"');
    expect(both).toContain('href="?language=en&amp;sort=likes"');
    expect(both).toMatch(/<option value="likes" selected/);
    // Searching offers the best match first; sizes are for models only.
    expect(await html("/models?search=quokkas")).toMatch(/<option value="relevance" selected/);
    expect(await html("/datasets")).not.toContain('name="size"');
  });

  it("leaves out of a signed-in account's listings what its preferences hide and its suppressions name", async () => {
    const suppress = await hub.request("/api/me/recommendation-suppressions", {
      method: "POST",
      token: bob,
      json: { kind: "repository", value: "alice/broken" },
    });
    expect(suppress.status, await suppress.clone().text()).toBeLessThan(300);
    const hide = await hub.request("/api/me/content-preferences", {
      method: "PUT",
      token: bob,
      json: { hiddenTags: ["language-fr-not-a-tag", "fr"] },
    });
    expect(hide.status, await hide.clone().text()).toBe(200);
    expect(await listed("/models?sort=name", bobCookie)).toEqual(["alice/base", "alice/quant"]);
    expect(await listed("/models?sort=name", aliceCookie)).toEqual([
      "alice/base",
      "alice/broken",
      "alice/quant",
      "alice/tuned",
    ]);
    // The owner's own page lists everything it holds.
    expect(await visible("/alice", bobCookie)).toContain("alice/broken");
    const undo = await hub.request("/api/me/content-preferences", { method: "PUT", token: bob, json: {} });
    expect(undo.status).toBe(200);
    const { suppressions } = await readJson<{ suppressions: Array<{ id: string }> }>(
      await hub.request("/api/me/recommendation-suppressions", { token: bob }),
    );
    for (const { id } of suppressions) {
      await hub.request(`/api/me/recommendation-suppressions/${id}`, { method: "DELETE", token: bob });
    }
    expect(await listed("/models?sort=name", bobCookie)).toHaveLength(4);
  });

  it("likes and unlikes from the repository page, and asks the signed-out to sign in", async () => {
    const anonymous = await visible("/alice/base");
    expect(anonymous).toContain("Sign in to like");
    expect(anonymous).toContain("0 likes");
    const liked = await postForm(
      hub,
      "/alice/base?/like",
      { liked: "false", next: "/alice/base/tree/main" },
      {
        cookie: bobCookie,
      },
    );
    expect(liked.status).toBe(303);
    expect(liked.headers.get("location")).toBe("/alice/base/tree/main");
    expect(await likes("alice/base")).toBe(1);
    const page = await visible("/alice/base", bobCookie);
    expect(page).toContain("Unlike");
    expect(page).toContain("1 like");
    // A `next` outside the repository is not followed.
    const back = await postForm(
      hub,
      "/alice/base?/like",
      { liked: "true", next: "//elsewhere.example" },
      {
        cookie: bobCookie,
      },
    );
    expect(back.headers.get("location")).toBe("/alice/base");
    expect(await likes("alice/base")).toBe(0);
    const signedOut = await postForm(hub, "/alice/base?/like", { liked: "false" });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toBe("/login?next=%2Falice%2Fbase");
    expect(await likes("alice/base")).toBe(0);
  });

  it("shows downloads, parameters and tensor types, the model tree both ways, and card problems to writers only", async () => {
    const base = await visible("/alice/base");
    expect(base).toContain("Parameters 10.1K");
    expect(base).toMatch(/F32 · 10K/);
    expect(base).toMatch(/BF16 · 100/);
    expect(base).toContain("1 fine-tune");
    expect(base).toContain("1 quantization");
    expect(await html("/alice/base")).toContain(
      `href="/models?filter=${encodeURIComponent("base_model:quantized:alice/base")}"`,
    );
    expect(base).toMatch(/Downloads last month \d+ /);
    expect(await visible("/alice/tuned")).toContain("Fine-tuned from alice/base");
    expect(await visible("/alice/quant")).toContain("Quantized from alice/base");
    const writer = await visible("/alice/broken", aliceCookie);
    expect(writer).toContain("The card's metadata needs fixing");
    expect(await visible("/alice/broken", bobCookie)).not.toContain("needs fixing");
    expect(await visible("/alice/base", aliceCookie)).not.toContain("needs fixing");
  });

  it("creates a collection holding a repository, adds, notes and removes items, renames and deletes it", async () => {
    const created = await postForm(
      hub,
      "/collections/new",
      {
        namespace: "alice",
        title: "Quokka models",
        description: "All about them",
        item: "models/alice/base",
      },
      { cookie: aliceCookie },
    );
    expect(created.status, await created.clone().text()).toBe(303);
    const address = created.headers.get("location") ?? "";
    expect(address).toMatch(/^\/collections\/alice\/quokka-models-[0-9a-f]{24}$/);
    const slug = address.slice("/collections/".length);
    const shown = await visible(address, bobCookie);
    expect(shown).toContain("Quokka models");
    expect(shown).toContain("All about them");
    expect(shown).toContain("alice/base");
    expect(shown).not.toContain("Edit this collection");
    expect(await visible("/collections/alice")).toContain("Quokka models");
    expect(await visible("/alice", bobCookie)).toContain("Collections");
    // The repository page names it, and offers its owner the collections that do not hold it yet.
    expect(await visible("/alice/base", bobCookie)).toContain("In collections Quokka models");
    expect(await html("/alice/base", aliceCookie)).not.toContain(`<option value="${slug}"`);
    expect(await html("/alice/tuned", aliceCookie)).toContain(`<option value="${slug}"`);
    const added = await postForm(
      hub,
      "/alice/tuned?/addToCollection",
      { collection: slug, note: "In French" },
      {
        cookie: aliceCookie,
      },
    );
    expect(added.status).toBe(200);
    const collection = async () =>
      readJson<Collection>(await hub.request(`/api/collections/${slug}`, { token: alice }));
    const items = (await collection()).items;
    expect(items.map((item) => [item.id, item.note?.text])).toEqual([
      ["alice/base", undefined],
      ["alice/tuned", "In French"],
    ]);
    // Someone else's collection refuses them, with the API's message.
    const refused = await postForm(
      hub,
      `${address}?/remove`,
      { item: items[0]?._id ?? "" },
      { cookie: bobCookie },
    );
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('role="alert"');
    const noted = await postForm(
      hub,
      `${address}?/note`,
      { item: items[0]?._id ?? "", note: "The base" },
      {
        cookie: aliceCookie,
      },
    );
    expect(noted.status).toBe(200);
    const removed = await postForm(
      hub,
      `${address}?/remove`,
      { item: items[1]?._id ?? "" },
      { cookie: aliceCookie },
    );
    expect(removed.status).toBe(200);
    expect((await collection()).items.map((item) => [item.id, item.note?.text])).toEqual([
      ["alice/base", "The base"],
    ]);
    const renamed = await postForm(
      hub,
      `${address}?/update`,
      { title: "Quokka models 2", description: "", private: "on" },
      { cookie: aliceCookie },
    );
    expect(renamed.status).toBe(303);
    const moved = renamed.headers.get("location") ?? "";
    expect(moved).toMatch(/^\/collections\/alice\/quokka-models-2-[0-9a-f]{24}$/);
    expect((await collection()).private).toBe(true);
    // The old address leads to the new one; a private collection is not found by others.
    const old = await hub.request(address, {
      headers: { accept: "text/html", cookie: aliceCookie },
      redirect: "manual",
    });
    expect([old.status, old.headers.get("location")]).toEqual([301, moved]);
    await pageText(hub, moved, { cookie: bobCookie, status: 404 });
    const deleted = await postForm(hub, `${moved}?/delete`, {}, { cookie: aliceCookie });
    expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/collections/alice"]);
    expect((await hub.request(`/api/collections/${slug}`, { token: alice })).status).toBe(404);
  });

  it("shows trending repositories on the home page, and recommendations shaped by the account's preferences", async () => {
    const anonymous = await visible("/");
    expect(anonymous).toContain("Trending models");
    expect(anonymous).not.toContain("Recommended for you");
    const saved = await hub.request("/api/me/content-preferences", {
      method: "PUT",
      token: bob,
      json: { languages: ["fr"] },
    });
    expect(saved.status).toBe(200);
    const forBob = await html("/", bobCookie);
    const section = forBob.slice(forBob.indexOf("Recommended for you"), forBob.indexOf("Trending models"));
    const names = [...section.matchAll(/class="name[^"]*"[^>]*>([^<]+)</g)].map((m) => m[1]);
    expect(names[0]).toBe("alice/tuned");
    expect(names).toContain("alice/base");
    const suppressed = await hub.request("/api/me/recommendation-suppressions", {
      method: "POST",
      token: bob,
      json: { kind: "repository", value: "alice/tuned" },
    });
    expect(suppressed.status).toBe(201);
    const after = await html("/", bobCookie);
    const again = after.slice(after.indexOf("Recommended for you"), after.indexOf("Trending models"));
    expect(again).not.toContain("alice/tuned");
    expect(again).toContain("alice/base");
  });
});
