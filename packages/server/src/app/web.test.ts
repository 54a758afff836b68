import type { ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { commitFiles, HTML, originOf, pageText, postForm, readPage } from "../test-support/web.js";

const ATTACK_CARD = `---
license: mit
---
# Inert

<script>alert("script")</script>
<img src="x" onerror="alert('onerror')">
[a link](javascript:alert('link'))
<a href="JaVaScRiPt:alert('mixed')">mixed</a>
<svg><script>alert('svg')</script></svg>
<iframe src="https://example.com"></iframe>
<form action="https://example.com"><input name="q"></form>
<style>body { display: none }</style>
<p style="position:fixed">styled</p>
<meta http-equiv="refresh" content="0;url=https://example.com">

Still here.
`;

const CARD = `---
license: apache-2.0
tags:
  - text-generation
  - rust
pipeline_tag: text-generation
base_model: alice/base
---
# The card's title

| column | value |
| ------ | ----- |
| a      | 1     |

- [x] done
- [ ] to do

\`\`\`python
def hello():
    return "world"
\`\`\`

See [the config](config.json) and ![a picture](images/pic.png).
`;

/**
 * The web site as the hub serves it in-process: pages rendered on the server from the public API, the
 * viewer's access applied, user content made inert, and the API and git paths never shadowed.
 * The browser journeys are in web.browser.test.ts.
 */
describe("the web site, rendered on the server", () => {
  let hub: InProcessHub;
  let alice: string;
  let aliceCookie: string;
  let bobCookie: string;
  const page = (path: string, cookie?: string) => readPage(hub, path, { cookie });
  const text = (path: string, cookie?: string, status = 200) => pageText(hub, path, { cookie, status });
  const commit = (repo: string, files: Record<string, string>, summary = "Add files") =>
    commitFiles(hub, alice, repo, files, { summary });
  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const response = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: `alice/${name}`, repo_type: "model", ...extra },
    });
    expect(response.status, await response.clone().text()).toBe(201);
  };

  beforeAll(async () => {
    hub = await startInProcessHub();
    const { password: alicePassword } = await hub.createUser("alice");
    const { password: bobPassword } = await hub.createUser("bob");
    alice = await hub.createToken("alice");
    aliceCookie = await hub.signIn("alice", alicePassword);
    bobCookie = await hub.signIn("bob", bobPassword);
    await create("card");
    await commit("alice/card", {
      "README.md": CARD,
      "config.json": '{ "hidden_size": 64 }\n',
      "src/model.py": 'class Model:\n    """A docstring\n    over two lines."""\n    size = 1 < 2\n',
      "big.txt": Array.from({ length: 60_000 }, (_, i) => `line ${i} of a long log`).join("\n"),
    });
    await create("attack");
    await commit("alice/attack", { "README.md": ATTACK_CARD });
    await create("secret", { private: true });
    await commit("alice/secret", { "README.md": "# Secret plans\n" });
    await create("empty");
  });
  afterAll(() => hub?.stop());

  it("serves pages to browsers with a strict policy, and leaves the API's and git's answers as they were", async () => {
    const home = await page("/");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = home.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/script-src 'self' 'sha256-[^']+'/);
    expect(/script-src [^;]*/.exec(csp)?.[0]).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(home.headers.get("x-frame-options")).toBe("DENY");

    // What is not a browser asking for a page gets the API's JSON, as before the site existed.
    for (const path of ["/", "/alice/card", "/models"]) {
      const response = await hub.request(path, { headers: { accept: "application/json" } });
      expect(response.status, path).toBe(404);
      expect((await readJson<ApiError>(response)).code).toBe("route_not_found");
    }
    const unknownApi = await page("/api/no/such/operation");
    expect(unknownApi.status).toBe(404);
    expect((await readJson<ApiError>(unknownApi)).code).toBe("route_not_found");
    const info = await hub.request("/api/models/alice/card", { headers: HTML });
    expect((await readJson<{ id: string }>(info)).id).toBe("alice/card");
    const bytes = await hub.request("/alice/card/resolve/main/config.json", { headers: HTML });
    expect(await bytes.text()).toBe('{ "hidden_size": 64 }\n');
    expect(bytes.headers.get("content-type")).toBe("application/octet-stream");
    const refs = await hub.request("/alice/card/info/refs?service=git-upload-pack", { headers: HTML });
    expect(refs.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");

    const asset = /href="(\/_app\/immutable\/[^"]+\.css)"/.exec(await home.text())?.[1] ?? "";
    const css = await hub.request(asset, { headers: { "accept-encoding": "gzip" } });
    expect(css.status).toBe(200);
    expect(css.headers.get("cache-control")).toContain("immutable");
    expect((await hub.request("/_app/immutable/../../package.json")).status).toBe(404);
  });

  it("lists only what the viewer may see, with badges and filters", async () => {
    const anonymous = await text("/models");
    expect(anonymous).toContain("alice/card");
    expect(anonymous).not.toContain("alice/secret");
    const owner = await text("/models", aliceCookie);
    expect(owner).toMatch(/alice\/secret<\/a>\s*(?:<!--[^>]*-->)?<span class="badge private">private</);
    expect(await text("/models", bobCookie)).not.toContain("alice/secret");
    const filtered = await text("/models?search=att", aliceCookie);
    expect(filtered).toContain("alice/attack");
    expect(filtered).not.toContain("alice/card<");
    const byName = await text("/models?sort=name", aliceCookie);
    expect(byName.indexOf("alice/attack")).toBeLessThan(byName.indexOf("alice/card"));
    expect(byName.indexOf("alice/card")).toBeLessThan(byName.indexOf("alice/empty"));
    expect(await text("/", aliceCookie)).toContain("alice/secret");
  });

  it("renders a card as GitHub-flavoured Markdown with its front matter as metadata", async () => {
    const body = await text("/alice/card");
    expect(body).toContain('<meta property="og:title" content="alice/card · Hub"');
    expect(body).toContain('<meta property="og:description" content="See the config and a picture."');
    expect(body).toMatch(/<h1[^>]*>The card(?:'|&#39;|&apos;)s title<\/h1>/);
    expect(body).toContain("<table>");
    expect(body).toMatch(/<li><input type="checkbox" disabled aria-label="Done" checked \/> done<\/li>/);
    expect(body).toContain('class="hljs-keyword"');
    expect(body).toContain('href="/alice/card/blob/main/config.json"');
    expect(body).toContain('src="/alice/card/resolve/main/images/pic.png"');
    for (const value of ["apache-2.0", "text-generation", "rust", "alice/base"]) {
      expect(body).toMatch(new RegExp(`class="chip[^"]*"[^>]*>${value}</span>`));
    }
    expect(body).not.toContain("pipeline_tag: text-generation");
    const empty = await text("/alice/empty");
    expect(empty).toContain("No card yet");
  });

  it("renders a card that attacks the page inert", async () => {
    const body = await text("/alice/attack");
    const card = body.slice(body.indexOf('<article class="card-body'), body.indexOf("</article>"));
    expect(card).toContain("Still here.");
    expect(card).toContain("styled");
    // Written as text the card shows it; as a link target, nothing survives.
    expect(card).not.toMatch(/(?:href|src|action)\s*=\s*["']?\s*javascript:/i);
    for (const forbidden of [/<script/i, /onerror/i, /<svg/i, /<iframe/i, /<form/i, /<style/i]) {
      expect(card).not.toMatch(forbidden);
    }
    expect(card).not.toMatch(/<meta/i);
    expect(card).not.toMatch(/style=/i);
    // The only scripts in the page are SvelteKit's own start-up script and its modules.
    expect(body.match(/<script/g)?.length).toBe(1);
  });

  it("hides a private repository from the anonymous and outsiders behind the not-found page", async () => {
    for (const cookie of [undefined, bobCookie]) {
      const body = await text("/alice/secret", cookie, 404);
      expect(body).toContain("This page does not exist, or you may not see it");
      expect(body).not.toContain("Secret plans");
      await text("/alice/secret/tree/main", cookie, 404);
      await text("/alice/secret/blob/main/README.md", cookie, 404);
    }
    expect(await text("/alice/secret", aliceCookie)).toContain("Secret plans");
    await text("/alice/no-such-repo", aliceCookie, 404);
    await text("/nobody-at-all", undefined, 404);
  });

  it("browses files: the tree, a highlighted file with line anchors, and the history", async () => {
    const tree = await text("/alice/card/tree/main");
    expect(tree).toContain('href="/alice/card/tree/main/src"');
    expect(tree).toContain('href="/alice/card/blob/main/config.json"');
    const folder = await text("/alice/card/tree/main/src");
    expect(folder).toContain('href="/alice/card/blob/main/src/model.py"');

    const file = await text("/alice/card/blob/main/src/model.py");
    expect(file).toContain('id="L1"');
    expect(file).toContain('id="L4"');
    expect(file).not.toContain('id="L5"');
    expect(file).toMatch(/1<\/span> &lt; <span class="hljs-number">2/);
    expect(file).toContain('href="/alice/card/resolve/main/src/model.py"');
    await text("/alice/card/blob/main/no-such-file", undefined, 404);

    // Text over 512 KiB shows its first whole lines and offers the rest as a download.
    const big = await text("/alice/card/blob/main/big.txt");
    expect(big).toContain("line 0 of a long log");
    expect(big).not.toContain("line 59999 of a long log");
    const lines = big.match(/<tr id="L\d+"/g)?.length ?? 0;
    expect(lines).toBeGreaterThan(20_000);
    expect(lines).toBeLessThan(60_000);
    expect(big).toContain("Download the whole file");
    await text("/alice/card/blob/no-such-branch/config.json", undefined, 404);

    const history = await text("/alice/card/commits/main");
    expect(history).toContain("Add files");
    expect(history).toMatch(/2 commits</);
    expect(history).toContain("Initial commit");
  });

  it("sends a page at a renamed repository's old name to the same page at the new one", async () => {
    await create("old-name");
    const moved = await hub.request("/api/repos/move", {
      method: "POST",
      token: alice,
      json: { fromRepo: "alice/old-name", toRepo: "alice/new-name" },
    });
    expect(moved.status).toBe(200);
    const response = await hub.request("/alice/old-name/tree/main?x=1", {
      headers: HTML,
      redirect: "manual",
    });
    expect(response.status).toBe(301);
    expect(response.headers.get("location")).toBe("/alice/new-name/tree/main?x=1");
    expect(await text("/alice/new-name/tree/main")).toContain(".gitattributes");
  });

  it("shows a person's page with their repositories and the papers they show", async () => {
    const paper = { arxivId: "2106.09685", title: "Low-Rank Adaptation", authors: ["Alice Example"] };
    const submitted = await hub.request("/api/me/paper-submissions", {
      method: "POST",
      token: alice,
      json: paper,
    });
    expect(submitted.status, await submitted.clone().text()).toBe(201);
    const claimed = await hub.request("/api/me/papers", {
      method: "POST",
      token: alice,
      json: { arxivId: "2106.09685", authorName: "Alice Example" },
    });
    expect(claimed.status, await claimed.clone().text()).toBe(201);
    const profile = await text("/alice");
    expect(profile).toMatch(
      /<a href="https:\/\/arxiv\.org\/abs\/2106\.09685[^"]*"[^>]*>Low-Rank Adaptation<\/a>/,
    );
    expect(profile).toContain("alice/card");
    expect(profile).not.toContain("alice/secret");
    expect(await text("/alice", aliceCookie)).toContain("alice/secret");
  });

  it("signs in through the form and refuses a form posted from another origin", async () => {
    const form = (fields: Record<string, string>, origin: string) =>
      postForm(hub, "/login?next=%2Falice%2Fcard", fields, { origin });
    const origin = originOf(hub);
    const { password } = await hub.createUser("carol");
    const wrong = await form({ username: "carol", password: "not it" }, origin);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("The user name or password is wrong");

    const foreign = await form({ username: "carol", password }, "https://evil.example");
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("set-cookie")).toBeNull();

    const signedIn = await form({ username: "carol", password }, origin);
    expect(signedIn.status, await signedIn.clone().text()).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/alice/card");
    const set = signedIn.headers.getSetCookie();
    const cookie = set.map((c) => c.split(";")[0] ?? "").join("; ");
    expect(cookie).toMatch(/^hub_session=[^;]+; hub_csrf=[^;]+$/);
    hub.secrets.add(/hub_session=([^;]+)/.exec(cookie)?.[1] ?? "");
    expect(set[0]).toMatch(/HttpOnly/);
    expect(await text("/", cookie)).toContain('href="/carol"');

    const out = await postForm(hub, "/logout", {}, { cookie });
    expect(out.status).toBe(303);
    const whoami = await hub.request("/api/whoami-v2", { headers: { cookie } });
    expect(whoami.status).toBe(401);
  });
});
