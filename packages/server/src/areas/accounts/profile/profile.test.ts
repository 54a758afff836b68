import { existsSync } from "node:fs";
import path from "node:path";
import { crc32, deflateSync } from "node:zlib";
import type { ApiError, Me, Profile, SocialIdentity, UserOverview } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { sniffImage } from "./avatar-image.js";

/** A real PNG image of one pixel of the given colour. */
function png(rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.from([0, ...rgb]))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9,
]);
const GIF = Buffer.concat([Buffer.from("GIF89a", "latin1"), Buffer.from([1, 0, 1, 0, 0, 0, 0, 0x3b])]);
function webp(): Buffer {
  const payload = Buffer.concat([
    Buffer.from("WEBPVP8L", "latin1"),
    Buffer.from([5, 0, 0, 0, 0x2f, 0, 0, 0, 0]),
  ]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(payload.length);
  return Buffer.concat([Buffer.from("RIFF", "latin1"), size, payload]);
}

describe("avatar type sniffing", () => {
  it("knows PNG, JPEG, GIF and WebP by their bytes and nothing else", () => {
    expect(sniffImage(png([1, 2, 3]))).toBe("image/png");
    expect(sniffImage(JPEG)).toBe("image/jpeg");
    expect(sniffImage(GIF)).toBe("image/gif");
    expect(sniffImage(webp())).toBe("image/webp");
    for (const other of [
      Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"),
      Buffer.from("<html><body>hi</body></html>"),
      Buffer.from("hello"),
      Buffer.alloc(0),
      png([0, 0, 0]).subarray(0, 10),
      webp().subarray(0, 20),
      Buffer.from("GIF89a"),
    ]) {
      expect(sniffImage(other)).toBeNull();
    }
  });
});

describe.each(DIALECTS)("profile, public overview and avatar on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: { handle: string; password: string };
  let write: string;
  let read: string;
  let fineGrained: string;
  let cookie: string;

  const put = (json: unknown, token = write) =>
    hub.request("/api/me/profile", { method: "PUT", token, json });
  const patch = (json: unknown, token = write) =>
    hub.request("/api/me/profile", { method: "PATCH", token, json });
  const upload = (body: Buffer | string, contentType = "text/plain", token = write) =>
    hub.request("/api/me/avatar", {
      method: "PUT",
      token,
      headers: { "content-type": contentType },
      body,
    });
  const overview = async (name = "alice") =>
    readJson<UserOverview>(await hub.request(`/api/users/${name}/overview`));

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect, env: { HUB_AVATAR_MAX_BYTES: "4096" } });
    alice = await hub.createUser("alice");
    await hub.createUser("bob");
    write = await hub.createToken("alice", ["--role", "write"]);
    read = await hub.createToken("alice", ["--role", "read"]);
    fineGrained = await hub.createToken("alice", [
      "--scopes",
      "repo:read,repo:write,repo:delete,community:write,jobs:run,inference:run,account:keys,webhooks:manage",
    ]);
    cookie = await hub.signIn("alice", alice.password);
    expect((await hub.cli(["org", "create", "acme", "--owner", "alice", "--fullname", "Acme"])).code).toBe(0);
  });
  afterAll(() => hub?.stop());

  it("PUT replaces the whole profile, which /api/me and the public overview show", async () => {
    const response = await put({
      fullname: "  Alice Liddell ",
      bio: "Models of looking glasses.\nAnd rabbits.",
      website: "https://alice.example.com/about",
      location: "Oxford",
      social: {
        github: "alice-l",
        twitter: "alice_l",
        linkedin: "alice-liddell",
        bluesky: "Alice.BSKY.social",
      },
      unknownFieldFromANewerClient: { anything: true },
    });
    expect(response.status).toBe(200);
    const profile = await readJson<Profile>(response);
    expect(profile).toEqual({
      fullname: "Alice Liddell",
      bio: "Models of looking glasses.\nAnd rabbits.",
      website: "https://alice.example.com/about",
      location: "Oxford",
      social: {
        github: "alice-l",
        twitter: "alice_l",
        linkedin: "alice-liddell",
        bluesky: "alice.bsky.social",
      },
      avatarUrl: `${hub.url}/api/users/alice/avatar`,
    });
    const me = await readJson<Me>(await hub.request("/api/me", { token: write }));
    expect(me.profile).toEqual(profile);
    expect(me.fullname).toBe("Alice Liddell");
    expect(me.avatarUrl).toBe(profile.avatarUrl);

    const anonymous = await hub.request("/api/users/alice/overview");
    expect(anonymous.status).toBe(200);
    expect(await readJson<UserOverview>(anonymous)).toMatchObject({
      type: "user",
      user: "alice",
      fullname: "Alice Liddell",
      details: "Models of looking glasses.\nAnd rabbits.",
      website: "https://alice.example.com/about",
      location: "Oxford",
      social: profile.social,
      avatarUrl: profile.avatarUrl,
      isPro: false,
      orgs: [{ name: "acme", fullname: "Acme" }],
    });

    // Fields left out take their defaults: the handle as display name, nothing else.
    const reset = await readJson<Profile>(await put({ bio: "Only a bio." }));
    expect(reset).toMatchObject({
      fullname: "alice",
      bio: "Only a bio.",
      website: "",
      location: "",
      social: { github: "", twitter: "", linkedin: "", bluesky: "" },
    });
    expect((await readJson<Me>(await hub.request("/api/me", { token: write }))).fullname).toBe("alice");
  });

  it("PATCH merges: given fields replace, null clears, social merges network by network", async () => {
    await put({
      fullname: "Alice",
      bio: "Bio",
      website: "http://a.example",
      social: { github: "al", twitter: "al" },
    });
    const patched = await readJson<Profile>(
      await patch({
        location: "Wonderland",
        website: null,
        social: { twitter: null, bluesky: "al.bsky.social" },
      }),
    );
    expect(patched).toMatchObject({
      fullname: "Alice",
      bio: "Bio",
      website: "",
      location: "Wonderland",
      social: { github: "al", twitter: "", linkedin: "", bluesky: "al.bsky.social" },
    });
    const nothing = await patch({ somethingElse: 1 });
    expect(nothing.status).toBe(200);
    expect(await readJson<Profile>(nothing)).toEqual(patched);
    expect((await readJson<Profile>(await patch({ fullname: null }))).fullname).toBe("alice");
    expect((await overview()).location).toBe("Wonderland");
  });

  it("refuses every bad field with a 400 that names it, and changes nothing", async () => {
    await put({ fullname: "Kept", bio: "kept" });
    const cases: Array<[unknown, string]> = [
      [{ fullname: "" }, "fullname"],
      [{ fullname: "   " }, "fullname"],
      [{ fullname: "x".repeat(101) }, "fullname"],
      [{ fullname: "tab\there" }, "fullname"],
      [{ fullname: 42 }, "fullname"],
      [{ bio: "x".repeat(501) }, "bio"],
      [{ bio: "bell\u0007" }, "bio"],
      [{ bio: ["a"] }, "bio"],
      [{ website: "not a url" }, "website"],
      [{ website: "ftp://files.example.com" }, "website"],
      [{ website: "javascript:alert(1)" }, "website"],
      [{ website: "https://user:pw@example.com" }, "website"],
      [{ website: `https://example.com/${"x".repeat(2048)}` }, "website"],
      [{ website: true }, "website"],
      [{ location: "x".repeat(101) }, "location"],
      [{ location: "two\nlines" }, "location"],
      [{ location: 7 }, "location"],
      [{ social: "alice" }, "social"],
      [{ social: { myspace: "alice" } }, "social.myspace"],
      [{ social: { github: "-bad-" } }, "social.github"],
      [{ social: { github: "a".repeat(40) } }, "social.github"],
      [{ social: { twitter: "@alice" } }, "social.twitter"],
      [{ social: { twitter: "a".repeat(16) } }, "social.twitter"],
      [{ social: { linkedin: "ab" } }, "social.linkedin"],
      [{ social: { bluesky: "nodot" } }, "social.bluesky"],
      [{ social: { bluesky: 5 } }, "social.bluesky"],
    ];
    for (const send of [put, patch]) {
      for (const [body, field] of cases) {
        const response = await send(body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        const error = await readJson<ApiError>(response);
        expect(error.field, JSON.stringify(body)).toBe(field);
      }
      for (const body of [[], "text", 3, null]) {
        expect((await send(body)).status, JSON.stringify(body)).toBe(400);
      }
      const empty = await hub.request("/api/me/profile", {
        method: send === put ? "PUT" : "PATCH",
        token: write,
        headers: { "content-type": "application/json" },
      });
      expect(empty.status).toBe(400);
    }
    expect(await readJson<Profile>(await patch({}))).toMatchObject({ fullname: "Kept", bio: "kept" });
  });

  it("needs a session or a write role token to change the profile (401 anonymous, 403 read or fine-grained)", async () => {
    for (const send of [put, patch]) {
      const anonymous = await hub.request("/api/me/profile", {
        method: send === put ? "PUT" : "PATCH",
        json: { bio: "x" },
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
      for (const token of [read, fineGrained]) {
        const refused = await send({ bio: "x" }, token);
        expect(refused.status).toBe(403);
        expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
      }
    }
    const session = await hub.request("/api/me/profile", {
      method: "PATCH",
      headers: { cookie },
      json: { bio: "From the browser." },
    });
    expect(session.status).toBe(200);
    expect((await overview()).details).toBe("From the browser.");
    // A read token still reads its own account context, profile included.
    expect((await readJson<Me>(await hub.request("/api/me", { token: read }))).profile.bio).toBe(
      "From the browser.",
    );
  });

  it("counts only public repositories on the overview and answers 404 for nobody", async () => {
    for (const [name, isPrivate] of [
      ["open", false],
      ["secret", true],
    ] as const) {
      const created = await hub.request("/api/repos", {
        method: "POST",
        token: write,
        json: { repo_id: `alice/${name}`, repo_type: "model", private: isPrivate },
      });
      expect(created.status).toBe(201);
    }
    expect(await overview()).toMatchObject({ numModels: 1, numDatasets: 0, numSpaces: 0, numMcps: 0 });
    const bob = await overview("bob");
    expect(bob).toMatchObject({ user: "bob", fullname: "bob", details: "", orgs: [] });
    expect(bob.avatarUrl).toBe(`${hub.url}/api/users/bob/avatar`);
    for (const name of ["nobody", "acme", "Not-A-Handle", "x".repeat(100)]) {
      const missing = await hub.request(`/api/users/${name}/overview`);
      expect(missing.status, name).toBe(404);
    }
  });

  it("stores an uploaded avatar by its real type and serves it with caching headers", async () => {
    const image = png([200, 10, 10]);
    // The declared type does not matter: the bytes say PNG.
    for (const contentType of ["text/plain", "application/octet-stream", "image/jpeg"]) {
      const response = await upload(image, contentType);
      expect(response.status, contentType).toBe(200);
    }
    const me = await readJson<Me>(await hub.request("/api/me", { token: write }));
    expect(me.avatarUrl).toMatch(new RegExp(`^${hub.url}/api/users/alice/avatar\\?v=[0-9a-f]{16}$`));
    expect((await overview()).avatarUrl).toBe(me.avatarUrl);

    const served = await hub.fetch(me.avatarUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const etag = served.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(Buffer.from(await served.arrayBuffer()).equals(image)).toBe(true);
    const unversioned = await hub.request("/api/users/alice/avatar");
    expect(unversioned.headers.get("cache-control")).toBe("public, max-age=300");
    const again = await hub.request("/api/users/alice/avatar", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const stored = path.join(hub.dataDir, "avatars", etag.slice(1, 3), etag.slice(1, -1));
    expect(existsSync(stored)).toBe(true);

    for (const [bytes, type] of [
      [JPEG, "image/jpeg"],
      [GIF, "image/gif"],
      [webp(), "image/webp"],
    ] as const) {
      expect((await upload(bytes)).status).toBe(200);
      const response = await hub.request("/api/users/alice/avatar");
      expect(response.headers.get("content-type")).toBe(type);
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    }
    // The PNG no account shows any more has left the disk.
    expect(existsSync(stored)).toBe(false);
  });

  it("refuses anything but a PNG, JPEG, WebP or GIF within the size limit, keeping the current avatar", async () => {
    expect((await upload(GIF)).status).toBe(200);
    const cases: Array<[Buffer | string, string, string]> = [
      ["", "text/plain", "invalid_avatar"],
      ["hello", "text/plain", "invalid_avatar"],
      [
        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
        "image/svg+xml",
        "invalid_avatar",
      ],
      ["<html><script>alert(1)</script></html>", "text/html", "invalid_avatar"],
      [JSON.stringify({ avatar: "x" }), "application/json", "invalid_avatar"],
      [webp().subarray(0, 20), "image/webp", "invalid_avatar"],
      [Buffer.concat([png([1, 1, 1]), Buffer.alloc(5000)]), "image/png", "avatar_too_large"],
    ];
    for (const [body, contentType, code] of cases) {
      const response = await upload(body, contentType);
      expect(response.status, contentType).toBe(400);
      expect((await readJson<ApiError>(response)).code).toBe(code);
    }
    // A body sent without a declared length (chunked) is cut off at the limit too.
    const chunked = await hub.request("/api/me/avatar", {
      method: "PUT",
      token: write,
      headers: { "content-type": "text/plain" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(png([1, 1, 1]));
          controller.enqueue(new Uint8Array(5000));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(400);
    expect((await readJson<ApiError>(chunked)).code).toBe("avatar_too_large");
    const current = await hub.request("/api/users/alice/avatar");
    expect(current.headers.get("content-type")).toBe("image/gif");
  });

  it("DELETE brings back the default avatar, a file shared with another account stays", async () => {
    const bobToken = await hub.createToken("bob");
    const image = png([1, 2, 3]);
    expect((await upload(image)).status).toBe(200);
    expect((await upload(image, "text/plain", bobToken)).status).toBe(200);
    const etag = (await hub.request("/api/users/alice/avatar")).headers.get("etag") ?? "";
    const stored = path.join(hub.dataDir, "avatars", etag.slice(1, 3), etag.slice(1, -1));

    const removed = await hub.request("/api/me/avatar", { method: "DELETE", token: write });
    expect(removed.status).toBe(204);
    expect(removed.headers.get("ratelimit")).toMatch(/r=\d+/);
    const fallback = await hub.request("/api/users/alice/avatar");
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get("content-type")).toBe("image/svg+xml");
    expect(fallback.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await fallback.text()).toMatch(/^<svg [^]*>A<\/text><\/svg>$/);
    expect((await readJson<Me>(await hub.request("/api/me", { token: write }))).avatarUrl).toBe(
      `${hub.url}/api/users/alice/avatar`,
    );
    expect(existsSync(stored)).toBe(true);
    expect((await hub.request("/api/me/avatar", { method: "DELETE", token: bobToken })).status).toBe(204);
    expect(existsSync(stored)).toBe(false);
    // Deleting again is harmless.
    expect((await hub.request("/api/me/avatar", { method: "DELETE", token: write })).status).toBe(204);
    expect((await hub.request("/api/users/nobody/avatar")).status).toBe(404);
  });

  it("needs a session or a write role token to change the avatar", async () => {
    for (const method of ["PUT", "DELETE"]) {
      const body = method === "PUT" ? GIF : undefined;
      const headers = { "content-type": "text/plain" };
      expect((await hub.request("/api/me/avatar", { method, body, headers })).status).toBe(401);
      for (const token of [read, fineGrained]) {
        const refused = await hub.request("/api/me/avatar", { method, body, headers, token });
        expect(refused.status).toBe(403);
        expect((await readJson<ApiError>(refused)).code).toBe("insufficient_scope");
      }
    }
    const session = await hub.request("/api/me/avatar", {
      method: "PUT",
      body: GIF,
      headers: { "content-type": "text/plain", cookie },
    });
    expect(session.status).toBe(200);
  });

  it("links identities with the admin CLI; the account chooses which the public profile shows", async () => {
    expect((await hub.cli(["identity", "link", "alice", "github", "alice-gh"])).code).toBe(0);
    const gitlab = await hub.cli(["identity", "link", "alice", "gitlab", "alice.gl", "--visible"]);
    expect(gitlab.code, gitlab.stderr).toBe(0);
    const unknown = await hub.cli(["identity", "link", "alice", "myspace", "alice"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not a provider/);
    const taken = await hub.cli(["identity", "link", "bob", "github", "alice-gh"]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/another account/);
    expect((await hub.cli(["identity", "link", "alice", "github", "bad name"])).code).toBe(1);
    expect((await hub.cli(["identity", "link", "alice", "github"])).code).toBe(2);

    const me = await readJson<Me>(await hub.request("/api/me", { token: read }));
    expect(me.socialIdentities).toEqual([
      {
        provider: "github",
        name: "alice-gh",
        url: "https://github.com/alice-gh",
        visible: false,
        linkedAt: expect.any(String),
      },
      {
        provider: "gitlab",
        name: "alice.gl",
        url: "https://gitlab.com/alice.gl",
        visible: true,
        linkedAt: expect.any(String),
      },
    ]);
    expect((await overview()).socialIdentities).toEqual([
      { provider: "gitlab", name: "alice.gl", url: "https://gitlab.com/alice.gl" },
    ]);

    const shown = await hub.request("/api/me/social-identities/github", {
      method: "PATCH",
      token: write,
      json: { visible: true, note: "ignored" },
    });
    expect(shown.status).toBe(200);
    expect(await readJson<SocialIdentity>(shown)).toMatchObject({ provider: "github", visible: true });
    expect((await overview()).socialIdentities.map((i) => i.provider)).toEqual(["github", "gitlab"]);
    const hidden = await hub.request("/api/me/social-identities/gitlab", {
      method: "PATCH",
      headers: { cookie },
      json: { visible: false },
    });
    expect(hidden.status).toBe(200);
    expect((await overview()).socialIdentities.map((i) => i.provider)).toEqual(["github"]);

    for (const json of [{}, { visible: "yes" }, { visible: null }, { visible: 1 }, [], "true"]) {
      const response = await hub.request("/api/me/social-identities/github", {
        method: "PATCH",
        token: write,
        json,
      });
      expect(response.status, JSON.stringify(json)).toBe(400);
    }
    for (const provider of ["GitHub", "x".repeat(33), "git_hub"]) {
      const response = await hub.request(`/api/me/social-identities/${provider}`, {
        method: "PATCH",
        token: write,
        json: { visible: true },
      });
      expect(response.status, provider).toBe(400);
      expect((await readJson<ApiError>(response)).field).toBe("provider");
    }
    for (const provider of ["orcid", "unknown-provider"]) {
      const response = await hub.request(`/api/me/social-identities/${provider}`, {
        method: "PATCH",
        token: write,
        json: { visible: true },
      });
      expect(response.status, provider).toBe(404);
    }
    expect(
      (await hub.request("/api/me/social-identities/github", { method: "PATCH", json: { visible: false } }))
        .status,
    ).toBe(401);
    for (const token of [read, fineGrained]) {
      const refused = await hub.request("/api/me/social-identities/github", {
        method: "PATCH",
        token,
        json: { visible: false },
      });
      expect(refused.status).toBe(403);
    }

    expect((await hub.cli(["identity", "unlink", "alice", "github"])).code).toBe(0);
    expect((await hub.cli(["identity", "unlink", "alice", "github"])).code).toBe(1);
    expect(
      (
        await hub.request("/api/me/social-identities/github", {
          method: "PATCH",
          token: write,
          json: { visible: true },
        })
      ).status,
    ).toBe(404);
    expect((await overview()).socialIdentities).toEqual([]);
    // Once unlinked, the identity may go to another account.
    expect((await hub.cli(["identity", "link", "bob", "github", "alice-gh", "--visible"])).code).toBe(0);
    expect((await overview("bob")).socialIdentities.map((i) => i.name)).toEqual(["alice-gh"]);
  });

  it("documents every operation with its request and response schemas", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const put = doc.paths["/api/me/profile"]?.put;
    expect(put?.operationId).toBe("account_profile_put");
    expect(JSON.stringify(put?.requestBody)).toContain("social");
    expect(JSON.stringify(put?.responses)).toContain("avatarUrl");
    expect(doc.paths["/api/me/profile"]?.patch?.operationId).toBe("account_profile_patch");
    const avatar = doc.paths["/api/me/avatar"]?.put;
    expect(avatar?.operationId).toBe("account_avatar_update");
    expect(avatar?.requestBody).toMatchObject({
      content: { "text/plain": { schema: { type: "string", format: "binary" } } },
    });
    expect(doc.paths["/api/me/avatar"]?.delete?.operationId).toBe("account_avatar_delete");
    expect(doc.paths["/api/users/{name}/overview"]?.get?.operationId).toBe("user_overview_get");
    const identity = doc.paths["/api/me/social-identities/{provider}"]?.patch;
    expect(identity?.operationId).toBe("account_social_identity_visibility_update");
    expect(JSON.stringify(identity?.requestBody)).toContain("visible");
    expect(JSON.stringify(identity?.responses)).toContain("linkedAt");
  });
});
