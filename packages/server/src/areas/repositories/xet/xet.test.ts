import { createHash } from "node:crypto";
import type { ApiError, RepoInfo, XetReconstruction, XetToken } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { STORE_SUITES, storeFor } from "../../../test-support/minio.js";
import { chunkBuffer } from "../../../xet/chunking.js";
import {
  fileHash,
  hashFromHex,
  hashToHex,
  keyedHash,
  loadXetHashing,
  termVerificationHash,
} from "../../../xet/hashing.js";
import { parseShard, serializeShard, type ShardFile, type ShardXorb } from "../../../xet/shard.js";
import { keystream, prng } from "../../../xet/testdata/test-inputs.js";
import {
  decodeChunkRecords,
  parseXorb,
  serializeXorb,
  XORB_MAX_BYTES,
  XORB_MAX_SERIALIZED_BYTES,
  type SerializedXorb,
} from "../../../xet/xorb.js";

await loadXetHashing();

/** Content cut into chunks and packed into one xorb, as a client would upload it. */
function packed(data: Uint8Array) {
  const chunks = chunkBuffer(data);
  const xorb = serializeXorb(chunks.map((c) => c.data));
  return { data, xorb, hex: hashToHex(xorb.hash) };
}

/** A term of chunks `[start, end)` of a xorb, with its verification hash. */
function term(xorb: SerializedXorb, start = 0, end = xorb.chunks.length) {
  const range = xorb.chunks.slice(start, end);
  return {
    xorbHash: xorb.hash,
    flags: 0,
    unpackedLength: range.reduce((sum, c) => sum + c.uncompressedLength, 0),
    chunkStart: start,
    chunkEnd: end,
    verificationHash: termVerificationHash(range.map((c) => c.hash)),
  };
}

/** A file of a shard: its terms, the file hash of their chunks, and a SHA-256 (the true one unless given). */
function shardFile(terms: ReturnType<typeof term>[], content: Uint8Array, sha256?: string): ShardFile {
  const chunks = terms.flatMap((t) => {
    const xorbChunks = xorbsByHash.get(hashToHex(t.xorbHash))?.chunks ?? [];
    return xorbChunks
      .slice(t.chunkStart, t.chunkEnd)
      .map((c) => ({ hash: c.hash, length: c.uncompressedLength }));
  });
  return {
    fileHash: fileHash(chunks),
    terms,
    sha256: sha256 ?? createHash("sha256").update(content).digest("hex"),
  };
}
const xorbsByHash = new Map<string, SerializedXorb>();
const remember = <T extends { xorb: SerializedXorb; hex: string }>(p: T): T => {
  xorbsByHash.set(p.hex, p.xorb);
  return p;
};

/** The CAS info entry of a xorb, as a client lists the xorbs it uploaded. */
function casInfo(xorb: SerializedXorb): ShardXorb {
  return {
    hash: xorb.hash,
    flags: 0,
    unpackedLength: xorb.unpackedLength,
    serializedLength: 0,
    chunks: xorb.chunks.map((c) => ({
      hash: c.hash,
      unpackedOffset: c.unpackedOffset,
      unpackedLength: c.uncompressedLength,
      flags: 0,
    })),
  };
}

const uploadShardBytes = (files: ShardFile[], xorbs: SerializedXorb[]) =>
  serializeShard({ files, xorbs: xorbs.map(casInfo) });

describe.each(STORE_SUITES)("the Xet token routes and CAS on $dialect, objects on $store", (suite) => {
  let hub: InProcessHub;
  let objects: Awaited<ReturnType<typeof storeFor>>;
  const tokens: Record<string, string> = {};
  const passwords: Record<string, string> = {};

  const cas = (pathname: string) => `${hub.url}/xet-cas${pathname}`;
  const xetToken = async (repo: string, direction: "read" | "write", rev = "main", as?: string) => {
    const response = await hub.request(`/api/models/${repo}/xet-${direction}-token/${rev}`, {
      token: as === undefined ? undefined : tokens[as],
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await readJson<XetToken>(response)).accessToken;
  };
  const postXorb = (token: string, hex: string, body: Uint8Array) =>
    hub.fetch(cas(`/v1/xorbs/default/${hex}`), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body,
    });
  const postShard = (token: string, body: Uint8Array) =>
    hub.fetch(cas("/v1/shards"), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body,
    });
  /** Whether the hub's object store holds a xorb, or an LFS object. */
  const xorbStored = async (hex: string) =>
    (await hub.deps.objectStore.namespace("xet/xorbs").size(hex)) !== null;
  const lfsStored = async (oid: string) => (await hub.deps.objectStore.size(oid)) !== null;
  const count = async (table: "xet_xorbs" | "xet_files" | "xet_xorb_links" | "lfs_objects") =>
    Number(
      (
        await hub.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string | number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const createRepo = async (owner: string, repoId: string, isPrivate = false) =>
    expect(
      (
        await hub.request("/api/repos", {
          method: "POST",
          token: tokens[owner],
          json: { repo_id: repoId, private: isPrivate },
        })
      ).status,
    ).toBe(201);

  beforeAll(async () => {
    objects = await storeFor(suite.store);
    hub = await startInProcessHub({
      dialect: suite.dialect,
      env: { HUB_XET_TOKEN_TTL_SECONDS: "600", ...objects.env },
    });
    for (const handle of ["alice", "bob", "carol", "dave"]) {
      passwords[handle] = (await hub.createUser(handle)).password;
      tokens[handle] = await hub.createToken(handle);
    }
    tokens.aliceRead = await hub.createToken("alice", ["--role", "read"]);
    await createRepo("alice", "alice/pub");
    await createRepo("carol", "carol/secret", true);
    await createRepo("bob", "bob/own");
    expect(
      (
        await hub.request("/api/organizations", {
          method: "POST",
          token: tokens.alice,
          json: { name: "acme" },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await hub.request("/api/organizations/acme/members", {
          method: "POST",
          token: tokens.alice,
          json: { user: "dave", role: "write" },
        })
      ).status,
    ).toBe(201);
    await createRepo("alice", "acme/shared", true);
  });
  afterAll(async () => {
    await hub?.stop();
    await objects?.stop();
  });

  describe("tokens", () => {
    it("answer accessToken, casUrl (this hub's own) and exp after the configured lifetime", async () => {
      const before = Math.floor(Date.now() / 1000);
      const response = await hub.request("/api/models/alice/pub/xet-write-token/main", {
        token: tokens.alice,
      });
      expect(response.status).toBe(200);
      const body = await readJson<XetToken>(response);
      expect(body.casUrl).toBe(`${hub.url}/xet-cas`);
      expect(body.exp).toBeGreaterThanOrEqual(before + 600);
      expect(body.exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
      expect(body.accessToken).not.toContain(tokens.alice ?? "");
      // huggingface_hub 1.19 and 2.x read the token they refresh for a download from the headers.
      expect(response.headers.get("x-xet-cas-url")).toBe(body.casUrl);
      expect(response.headers.get("x-xet-access-token")).toBe(body.accessToken);
      expect(response.headers.get("x-xet-token-expiration")).toBe(String(body.exp));
      // Nothing about the token is stored: no table holds it.
      const stored = JSON.stringify(await hub.db.selectFrom("access_tokens").selectAll().execute());
      expect(stored).not.toContain(body.accessToken);
    });

    it("read for anyone who may download, write for writers only", async () => {
      expect((await hub.request("/api/models/alice/pub/xet-read-token/main")).status).toBe(200);
      expect((await hub.request("/api/models/alice/pub/xet-write-token/main")).status).toBe(401);
      expect(
        (await hub.request("/api/models/alice/pub/xet-write-token/main", { token: tokens.bob })).status,
      ).toBe(403);
      expect(
        (await hub.request("/api/models/alice/pub/xet-write-token/main", { token: tokens.aliceRead })).status,
      ).toBe(403);
      expect(
        (await hub.request("/api/models/alice/pub/xet-read-token/main", { token: tokens.aliceRead })).status,
      ).toBe(200);
      expect(
        (await hub.request("/api/models/carol/secret/xet-read-token/main", { token: tokens.bob })).status,
      ).toBe(404);
      expect((await hub.request("/api/models/carol/secret/xet-read-token/main")).status).toBe(401);
    });

    it("for a pull request (create_pr=1, revision None) need community:write only", async () => {
      const pr = await hub.request("/api/models/alice/pub/xet-write-token/None?create_pr=1", {
        token: tokens.bob,
      });
      expect(pr.status).toBe(200);
      const { accessToken } = await readJson<XetToken>(pr);
      const { data, xorb, hex } = remember(packed(prng("pr-xorb", 50_000)));
      expect((await postXorb(accessToken, hex, xorb.bytes)).status).toBe(200);
      expect(data.length).toBe(50_000);
      expect(
        (await hub.request("/api/models/alice/pub/xet-write-token/None", { token: tokens.aliceRead })).status,
      ).toBe(403);
      expect(
        (await hub.request("/api/models/alice/pub/xet-write-token/None", { token: tokens.alice })).status,
      ).toBe(200);
    });

    it("are refused by the CAS when missing, forged or read-only for a write", async () => {
      const { xorb, hex } = remember(packed(prng("refused", 20_000)));
      const read = await xetToken("alice/pub", "read", "main", "alice");
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const forged = `${write.slice(0, -4)}AAAA`;
      for (const bad of ["", "nonsense", forged, tokens.alice ?? ""]) {
        const response = await postXorb(bad, hex, xorb.bytes);
        expect(response.status, bad).toBe(401);
        expect((await readJson<ApiError>(response)).code).toBe("xet_token_invalid");
      }
      expect((await postXorb(read, hex, xorb.bytes)).status).toBe(403);
      expect(await xorbStored(hex)).toBe(false);
    });

    it("stop at once when the credential is revoked", async () => {
      const fresh = await hub.createToken("alice");
      const xet = (
        await readJson<XetToken>(
          await hub.request("/api/models/alice/pub/xet-write-token/main", { token: fresh }),
        )
      ).accessToken;
      const first = remember(packed(prng("revoke-1", 30_000)));
      expect((await postXorb(xet, first.hex, first.xorb.bytes)).status).toBe(200);
      const me = await readJson<{ auth: { tokenId: string } }>(
        await hub.request("/api/me", { token: fresh }),
      );
      await hub.reauthenticate(tokens.alice ?? "", passwords.alice ?? "");
      expect(
        (await hub.request(`/api/me/tokens/${me.auth.tokenId}`, { method: "DELETE", token: tokens.alice }))
          .status,
      ).toBe(204);
      const second = remember(packed(prng("revoke-2", 30_000)));
      const refused = await postXorb(xet, second.hex, second.xorb.bytes);
      expect(refused.status).toBe(401);
      expect(await xorbStored(second.hex)).toBe(false);
    });

    it("stop at once when the caller leaves the organization", async () => {
      const xet = await xetToken("acme/shared", "write", "main", "dave");
      const first = remember(packed(prng("org-1", 30_000)));
      expect((await postXorb(xet, first.hex, first.xorb.bytes)).status).toBe(200);
      expect(
        (await hub.request("/api/organizations/acme/members/dave", { method: "DELETE", token: tokens.alice }))
          .status,
      ).toBe(204);
      const second = remember(packed(prng("org-2", 30_000)));
      expect([403, 404]).toContain((await postXorb(xet, second.hex, second.xorb.bytes)).status);
      expect(await xorbStored(second.hex)).toBe(false);
    });

    it("answer 404 with the no-Xet message when the repository's xetEnabled is off, and the old tokens stop", async () => {
      await createRepo("bob", "bob/lfs-only");
      const before = await xetToken("bob/lfs-only", "write", "main", "bob");
      const info = async () =>
        readJson<RepoInfo>(
          await hub.request("/api/models/bob/lfs-only?expand[]=xetEnabled", { token: tokens.bob }),
        );
      expect((await info()).xetEnabled).toBe(true);
      expect(
        (
          await hub.request("/api/models/bob/lfs-only/settings", {
            method: "PUT",
            token: tokens.bob,
            json: { xetEnabled: false },
          })
        ).status,
      ).toBe(200);
      expect((await info()).xetEnabled).toBe(false);
      for (const direction of ["read", "write"]) {
        const response = await hub.request(`/api/models/bob/lfs-only/xet-${direction}-token/main`, {
          token: tokens.bob,
        });
        expect(response.status).toBe(404);
        expect(response.headers.get("x-error-message")).toMatch(/HF_HUB_DISABLE_XET=1/);
        expect((await readJson<ApiError>(response)).error).toMatch(/HF_HUB_DISABLE_XET=1/);
      }
      const { xorb, hex } = remember(packed(prng("disabled", 20_000)));
      expect((await postXorb(before, hex, xorb.bytes)).status).toBe(404);
      expect(await xorbStored(hex)).toBe(false);
      // The LFS batch answers as it always did: basic transfers, no Xet.
      const batch = await hub.fetch(`${hub.url}/bob/lfs-only.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.bob}`,
          "content-type": "application/vnd.git-lfs+json",
          accept: "application/vnd.git-lfs+json",
        },
        body: JSON.stringify({
          operation: "upload",
          transfers: ["basic", "multipart", "xet"],
          objects: [{ oid: "a".repeat(64), size: 3 }],
          hash_algo: "sha256",
        }),
      });
      expect(batch.status).toBe(200);
      expect(((await batch.json()) as { transfer: string }).transfer).toBe("basic");
    });
  });

  describe("the Git LFS batch", () => {
    const batch = (repo: string, as: string, body: Record<string, unknown>) =>
      hub.fetch(`${hub.url}/${repo}.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens[as]}`,
          "content-type": "application/vnd.git-lfs+json",
          accept: "application/vnd.git-lfs+json",
        },
        body: JSON.stringify({ operation: "upload", hash_algo: "sha_256", ...body }),
      });
    interface Answer {
      transfer: string;
      objects: Array<{
        oid: string;
        actions?: { upload?: { href: string; header?: Record<string, string> }; verify?: unknown };
      }>;
    }
    const object = { oid: "b".repeat(64), size: 5 * 1024 * 1024 };

    it("answers a client that offers xet with the CAS, a write token and the route to refresh it", async () => {
      const before = Math.floor(Date.now() / 1000);
      const response = await batch("alice/pub", "alice", {
        transfers: ["basic", "multipart", "xet"],
        ref: { name: "main" },
        objects: [object],
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as Answer;
      expect(answer.transfer).toBe("xet");
      const upload = answer.objects[0]?.actions?.upload;
      expect(answer.objects[0]?.actions?.verify).toBeUndefined();
      expect(upload?.href).toBe(`${hub.url}/api/models/alice/pub/xet-write-token/main`);
      const header = upload?.header ?? {};
      expect(header["X-Xet-Cas-Url"]).toBe(`${hub.url}/xet-cas`);
      expect(Number(header["X-Xet-Token-Expiration"])).toBeGreaterThanOrEqual(before + 600);
      expect(header["X-Xet-Session-Id"]).toMatch(/^[0-9a-f-]{36}$/);
      // The token is a CAS write token of the repository: a xorb it uploads is kept.
      const { xorb, hex } = remember(packed(prng("from the batch", 30_000)));
      const posted = await postXorb(header["X-Xet-Access-Token"] ?? "", hex, xorb.bytes);
      expect(posted.status, await posted.clone().text()).toBe(200);
      // The client refreshes it at the href, with its own credential.
      const refreshed = await hub.request(new URL(upload?.href ?? "").pathname, { token: tokens.alice });
      expect(refreshed.status).toBe(200);

      // A client that does not offer xet gets the transfers it did.
      const plain = await batch("alice/pub", "alice", {
        transfers: ["basic", "multipart"],
        objects: [object],
      });
      expect(((await plain.json()) as Answer).transfer).toBe("basic");
    });

    it("hands someone who may not write a pull-request token when no branch is named, and refuses a branch", async () => {
      const opened = await batch("alice/pub", "bob", { transfers: ["basic", "xet"], objects: [object] });
      expect(opened.status).toBe(200);
      const answer = (await opened.json()) as Answer;
      expect(answer.transfer).toBe("xet");
      const upload = answer.objects[0]?.actions?.upload;
      expect(upload?.href).toBe(`${hub.url}/api/models/alice/pub/xet-write-token/None?create_pr=1`);
      const href = new URL(upload?.href ?? "");
      expect((await hub.request(`${href.pathname}${href.search}`, { token: tokens.bob })).status).toBe(200);
      // Without create_pr the route is a writer's: bob may not refresh a branch token.
      expect((await hub.request(href.pathname, { token: tokens.bob })).status).toBe(403);
      const branch = await batch("alice/pub", "bob", {
        transfers: ["basic", "xet"],
        ref: { name: "main" },
        objects: [object],
      });
      expect(branch.status).toBe(403);
    });
  });

  describe("xorb uploads", () => {
    it("store a valid xorb once, and answer was_inserted false the second time", async () => {
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const { xorb, hex } = remember(packed(prng("valid", 300_000)));
      const first = await postXorb(write, hex, xorb.bytes);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ was_inserted: true });
      expect(await xorbStored(hex)).toBe(true);
      const again = await postXorb(write, hex, xorb.bytes);
      expect(await again.json()).toEqual({ was_inserted: false });
      const row = await hub.db
        .selectFrom("xet_xorbs")
        .selectAll()
        .where("hash", "=", hex)
        .executeTakeFirstOrThrow();
      expect(Number(row.size)).toBe(xorb.bytes.length);
      expect(row.chunk_count).toBe(xorb.chunks.length);
    });

    it("take a full xorb as hf_xet cuts it, 64 MiB of data whose headers take it past 64 MiB", async () => {
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const data = keystream("full", XORB_MAX_BYTES);
      const xorb = serializeXorb(
        Array.from({ length: XORB_MAX_BYTES / 65536 }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536)),
        { compression: "none" },
      );
      expect(xorb.bytes.length).toBeGreaterThan(XORB_MAX_BYTES);
      // Verified on a worker thread: a changed byte is refused with parseXorb's own message, nothing stored.
      const corrupted = xorb.bytes.slice();
      const at = (xorb.chunks[500]?.offset ?? 0) + 1000;
      corrupted[at] = (corrupted[at] ?? 0) ^ 0xff;
      const xorbsBefore = await count("xet_xorbs");
      const refused = await postXorb(write, hashToHex(xorb.hash), corrupted);
      expect(refused.status).toBe(400);
      const error = await readJson<ApiError>(refused);
      expect(error.code).toBe("xet_xorb_invalid");
      expect(error.error).toBe(
        `xorb hash mismatch: its 1024 chunks hash to ${hashToHex(parseXorb(corrupted).hash)}, but it was uploaded as ${hashToHex(xorb.hash)}`,
      );
      expect(await xorbStored(hashToHex(xorb.hash))).toBe(false);
      expect(await count("xet_xorbs")).toBe(xorbsBefore);
      const response = await postXorb(write, hashToHex(xorb.hash), xorb.bytes);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toEqual({ was_inserted: true });
    });

    it("refuse a changed byte, a truncation, a wrong hash, a bad name and an oversized body, storing nothing", async () => {
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const { xorb, hex } = remember(packed(prng("broken", 200_000)));
      const other = remember(packed(prng("other", 10_000)));
      const corrupted = Uint8Array.from(xorb.bytes);
      corrupted[xorb.bytes.length - 100] = (corrupted[xorb.bytes.length - 100] ?? 0) ^ 0xff;
      const xorbsBefore = await count("xet_xorbs");
      const cases: Array<[string, string, Uint8Array, RegExp]> = [
        ["a changed byte", hex, corrupted, /hash|chunk|lz4/i],
        ["a truncated body", hex, xorb.bytes.subarray(0, xorb.bytes.length - 7), /truncated|needs|bytes/i],
        ["another xorb's bytes", hex, other.xorb.bytes, /xorb hash mismatch/],
        ["a name that is no hash", "not-a-hash", xorb.bytes, /not a xorb hash/],
      ];
      for (const [what, name, body, message] of cases) {
        const response = await postXorb(write, name, body);
        expect(response.status, what).toBe(400);
        const error = await readJson<ApiError>(response);
        expect(error.code, what).toBe("xet_xorb_invalid");
        expect(error.error, what).toMatch(message);
      }
      const huge = new Uint8Array(XORB_MAX_SERIALIZED_BYTES + 1);
      const tooLarge = await postXorb(write, hex, huge);
      expect(tooLarge.status).toBe(400);
      expect((await readJson<ApiError>(tooLarge)).error).toBe(
        `The xorb is larger than the ${XORB_MAX_SERIALIZED_BYTES}-byte limit; nothing was stored.`,
      );
      expect(await xorbStored(hex)).toBe(false);
      expect(await count("xet_xorbs")).toBe(xorbsBefore);
    });
  });

  describe("shard uploads", () => {
    it("register the files and make them LFS objects of the repository, which a commit then names", async () => {
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const one = remember(packed(prng("file-one", 400_000)));
      const two = remember(packed(prng("file-two", 90_000)));
      for (const p of [one, two]) expect((await postXorb(write, p.hex, p.xorb.bytes)).status).toBe(200);
      const both = new Uint8Array([...one.data, ...two.data]);
      const files = [
        shardFile([term(one.xorb)], one.data),
        shardFile([term(one.xorb), term(two.xorb)], both),
      ];
      const response = await postShard(write, uploadShardBytes(files, [one.xorb, two.xorb]));
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.json()).toEqual({ result: 1 });
      const sha = createHash("sha256").update(both).digest("hex");
      expect(await lfsStored(sha)).toBe(true);
      const commit = await hub.request("/api/models/alice/pub/commit/main", {
        method: "POST",
        token: tokens.alice,
        headers: { "content-type": "application/x-ndjson" },
        body: [
          { key: "header", value: { summary: "Through Xet" } },
          { key: "lfsFile", value: { path: "both.bin", algo: "sha256", oid: sha, size: both.length } },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n"),
      });
      expect(commit.status, await commit.clone().text()).toBe(200);
      const download = await hub.request("/alice/pub/resolve/main/both.bin", { token: tokens.alice });
      expect(download.status).toBe(200);
      expect(
        createHash("sha256")
          .update(Buffer.from(await download.arrayBuffer()))
          .digest("hex"),
      ).toBe(sha);
      // The headers clients read are on the hub's answer, also when it redirects to the store.
      const answer = await hub.request("/alice/pub/resolve/main/both.bin", {
        token: tokens.alice,
        redirect: "manual",
      });
      await answer.arrayBuffer();
      expect(answer.status).toBe(suite.store === "s3" ? 302 : 200);
      expect(answer.headers.get("x-linked-etag")).toBe(`"${sha}"`);

      // Downloads and listings announce the file as the Hub announces Xet files, while xetEnabled is on.
      const id = hashToHex(files[1]?.fileHash ?? new Uint8Array(32));
      const announced = async () => {
        const head = await hub.request("/alice/pub/resolve/main/both.bin", {
          method: "HEAD",
          token: tokens.alice,
          redirect: "manual",
        });
        const tree = await readJson<Array<{ path: string; xetHash?: string }>>(
          await hub.request("/api/models/alice/pub/tree/main", { token: tokens.alice }),
        );
        const info = await readJson<Array<{ path: string; xetHash?: string }>>(
          await hub.request("/api/models/alice/pub/paths-info/main", {
            method: "POST",
            token: tokens.alice,
            json: { paths: ["both.bin"] },
          }),
        );
        return {
          hash: head.headers.get("x-xet-hash"),
          link: head.headers.get("link"),
          tree: tree.find((entry) => entry.path === "both.bin")?.xetHash,
          info: info[0]?.xetHash,
        };
      };
      const on = await announced();
      expect(on).toMatchObject({ hash: id, tree: id, info: id });
      const commitSha = answer.headers.get("x-repo-commit") ?? "";
      expect(on.link).toBe(
        `<${hub.url}/api/models/alice/pub/xet-read-token/${commitSha}>; rel="xet-auth", <${hub.url}/xet-cas/v1/reconstructions/${id}>; rel="xet-reconstruction-info"`,
      );
      const setXet = (xetEnabled: boolean) =>
        hub.request("/api/models/alice/pub/settings", {
          method: "PUT",
          token: tokens.alice,
          json: { xetEnabled },
        });
      expect((await setXet(false)).status).toBe(200);
      expect(await announced()).toEqual({ hash: null, link: null, tree: undefined, info: undefined });
      expect((await setXet(true)).status).toBe(200);
    });

    it("refuse unknown xorbs, foreign private xorbs, a wrong SHA-256 and malformed shards, recording nothing", async () => {
      const carol = await xetToken("carol/secret", "write", "main", "carol");
      const secret = remember(packed(prng("carol-secret", 120_000)));
      expect((await postXorb(carol, secret.hex, secret.xorb.bytes)).status).toBe(200);
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const mine = remember(packed(prng("alice-mine", 120_000)));
      expect((await postXorb(write, mine.hex, mine.xorb.bytes)).status).toBe(200);
      const unknown = remember(packed(prng("never-uploaded", 40_000)));
      const files = await count("xet_files");
      const links = await count("lfs_objects");
      const refuse = async (what: string, body: Uint8Array, message: RegExp) => {
        const response = await postShard(write, body);
        expect(response.status, what).toBe(400);
        const error = await readJson<ApiError>(response);
        expect(error.code, what).toBe("xet_shard_invalid");
        expect(error.error, what).toMatch(message);
      };
      await refuse(
        "an unknown xorb",
        uploadShardBytes([shardFile([term(unknown.xorb)], unknown.data)], [unknown.xorb]),
        new RegExp(unknown.hex),
      );
      // Carol's private xorb answers as if it were not there: its existence does not leak.
      await refuse(
        "a private xorb of someone else",
        uploadShardBytes([shardFile([term(secret.xorb)], secret.data)], []),
        new RegExp(`does not hold, or that were uploaded for repositories you may not read: ${secret.hex}`),
      );
      // A right file followed by one whose SHA-256 is wrong: neither is kept.
      const wrongSha = "0".repeat(64);
      await refuse(
        "a wrong SHA-256",
        uploadShardBytes(
          [shardFile([term(mine.xorb)], mine.data), shardFile([term(mine.xorb, 0, 1)], mine.data, wrongSha)],
          [mine.xorb],
        ),
        /has SHA-256 [0-9a-f]{64}, not 0{64} as the shard says/,
      );
      const mineSha = createHash("sha256").update(mine.data).digest("hex");
      expect(await lfsStored(mineSha)).toBe(false);
      expect(await lfsStored(wrongSha)).toBe(false);
      const good = uploadShardBytes([shardFile([term(mine.xorb)], mine.data)], [mine.xorb]);
      await refuse("a truncated shard", good.subarray(0, good.length - 10), /truncated|bookend|needs/);
      await refuse("no shard at all", new TextEncoder().encode("hello"), /shard/);
      expect(await count("xet_files")).toBe(files);
      expect(await count("lfs_objects")).toBe(links);
      // Made public, Carol's xorb is anyone's to use.
      expect(
        (
          await hub.request("/api/models/carol/secret/settings", {
            method: "PUT",
            token: tokens.carol,
            json: { private: false },
          })
        ).status,
      ).toBe(200);
      const reuse = await postShard(
        write,
        uploadShardBytes([shardFile([term(secret.xorb)], secret.data)], []),
      );
      expect(reuse.status, await reuse.clone().text()).toBe(200);
      await hub.request("/api/models/carol/secret/settings", {
        method: "PUT",
        token: tokens.carol,
        json: { private: true },
      });
    });
  });

  describe("global deduplication", () => {
    it("describes xorbs of repositories the caller may read, keys chunk hashes, and refuses the rest as absent", async () => {
      const alice = await xetToken("alice/pub", "write", "main", "alice");
      const shared = remember(packed(prng("dedup-public", 200_000)));
      expect((await postXorb(alice, shared.hex, shared.xorb.bytes)).status).toBe(200);
      expect(
        (
          await postShard(
            alice,
            uploadShardBytes([shardFile([term(shared.xorb)], shared.data)], [shared.xorb]),
          )
        ).status,
      ).toBe(200);
      const carol = await xetToken("carol/secret", "write", "main", "carol");
      const hidden = remember(packed(prng("dedup-private", 200_000)));
      expect((await postXorb(carol, hidden.hex, hidden.xorb.bytes)).status).toBe(200);
      expect(
        (
          await postShard(
            carol,
            uploadShardBytes([shardFile([term(hidden.xorb)], hidden.data)], [hidden.xorb]),
          )
        ).status,
      ).toBe(200);
      const bob = await xetToken("bob/own", "write", "main", "bob");
      const query = (token: string, chunk: Uint8Array, prefix = "default") =>
        hub.fetch(cas(`/v1/chunks/${prefix}/${hashToHex(chunk)}`), {
          headers: { authorization: `Bearer ${token}` },
        });
      const firstOf = (p: { xorb: SerializedXorb }) => p.xorb.chunks[0]?.hash ?? new Uint8Array(32);

      for (const prefix of ["default", "default-merkledb"]) {
        const answer = await query(bob, firstOf(shared), prefix);
        expect(answer.status).toBe(200);
        const shard = parseShard(new Uint8Array(await answer.arrayBuffer()));
        const key = shard.footer?.chunkHashKey ?? new Uint8Array(32);
        expect(shard.footer).toBeDefined();
        expect(shard.files).toEqual([]);
        expect(shard.xorbs.map((x) => hashToHex(x.hash))).toEqual([shared.hex]);
        expect(shard.xorbs[0]?.chunks.map((c) => hashToHex(c.hash))).toEqual(
          shared.xorb.chunks.map((c) => hashToHex(keyedHash(key, c.hash))),
        );
      }
      // Bob may not read Carol's repository: her chunk answers as a chunk nobody has.
      expect((await query(bob, firstOf(hidden))).status).toBe(404);
      expect((await query(bob, hashFromHex("ab".repeat(32)))).status).toBe(404);
      expect((await query(carol, firstOf(hidden))).status).toBe(200);
    });
  });

  describe("reconstruction", () => {
    it("plans a file of the token's repository, whole or by Range, with signed fetch URLs to xorb byte ranges", async () => {
      const write = await xetToken("alice/pub", "write", "main", "alice");
      const one = remember(packed(prng("recon-1", 500_000)));
      const two = remember(packed(prng("recon-2", 300_000)));
      for (const p of [one, two]) expect((await postXorb(write, p.hex, p.xorb.bytes)).status).toBe(200);
      const content = new Uint8Array([
        ...one.data,
        ...two.data,
        ...one.data.subarray(0, one.xorb.chunks[0]?.uncompressedLength),
      ]);
      const file = shardFile([term(one.xorb), term(two.xorb), term(one.xorb, 0, 1)], content);
      expect((await postShard(write, uploadShardBytes([file], [one.xorb, two.xorb]))).status).toBe(200);
      const read = await xetToken("alice/pub", "read", "main", "bob");
      const id = hashToHex(file.fileHash);

      /** Follows a reconstruction answer as hf_xet does: each fetch with its url_range, decode, cut. */
      const rebuild = async (answer: XetReconstruction) => {
        const parts: Uint8Array[] = [];
        for (const t of answer.terms) {
          const fetch = (answer.fetch_info[t.hash] ?? []).find(
            (f) => f.range.start <= t.range.start && f.range.end >= t.range.end,
          );
          if (!fetch) throw new Error(`no fetch for term ${t.hash}`);
          const got = await hub.fetch(fetch.url, {
            headers: { range: `bytes=${fetch.url_range.start}-${fetch.url_range.end}` },
          });
          expect(got.status).toBe(206);
          const chunks = decodeChunkRecords(new Uint8Array(await got.arrayBuffer()));
          parts.push(...chunks.slice(t.range.start - fetch.range.start, t.range.end - fetch.range.start));
        }
        const all = Buffer.concat(parts);
        return all.subarray(answer.offset_into_first_range);
      };
      const whole = await hub.fetch(cas(`/v1/reconstructions/${id}`), {
        headers: { authorization: `Bearer ${read}` },
      });
      expect(whole.status).toBe(200);
      const plan = await readJson<XetReconstruction>(whole);
      expect(plan.terms).toHaveLength(3);
      expect(Buffer.compare(await rebuild(plan), Buffer.from(content))).toBe(0);

      const [start, end] = [450_123, 620_456];
      const ranged = await hub.fetch(cas(`/v1/reconstructions/${id}`), {
        headers: { authorization: `Bearer ${read}`, range: `bytes=${start}-${end}` },
      });
      expect(ranged.status).toBe(200);
      const part = await readJson<XetReconstruction>(ranged);
      expect(part.offset_into_first_range).toBeGreaterThan(0);
      const rebuilt = await rebuild(part);
      expect(
        Buffer.compare(rebuilt.subarray(0, end - start + 1), Buffer.from(content.subarray(start, end + 1))),
      ).toBe(0);

      const beyond = await hub.fetch(cas(`/v1/reconstructions/${id}`), {
        headers: { authorization: `Bearer ${read}`, range: `bytes=${content.length}-` },
      });
      expect(beyond.status).toBe(416);

      // Another repository's token does not reach the file; nor does a tampered or widened fetch URL.
      const other = await xetToken("bob/own", "read", "main", "bob");
      expect(
        (await hub.fetch(cas(`/v1/reconstructions/${id}`), { headers: { authorization: `Bearer ${other}` } }))
          .status,
      ).toBe(404);
      const fetch = Object.values(plan.fetch_info)[0]?.[0];
      if (!fetch) throw new Error("a fetch");
      const tampered = fetch.url.replace(
        /range=(\d+)-(\d+)/,
        (_m, a: string, b: string) => `range=${a}-${Number(b) + 1}`,
      );
      expect((await hub.fetch(tampered)).status).toBe(403);
      expect(
        (
          await hub.fetch(fetch.url, {
            headers: { range: `bytes=${fetch.url_range.start}-${fetch.url_range.end + 1}` },
          })
        ).status,
      ).toBe(403);
      expect((await hub.fetch(fetch.url)).status).toBe(206);
    });

    it("answers 404 to the V2 APIs and upload grants, so hf_xet falls back to V1, and 204 to telemetry", async () => {
      const read = await xetToken("alice/pub", "read", "main", "alice");
      const headers = { authorization: `Bearer ${read}` };
      expect((await hub.fetch(cas(`/v2/reconstructions/${"a".repeat(64)}`), { headers })).status).toBe(404);
      expect((await hub.fetch(cas("/v2/shards"), { method: "POST", headers, body: "x" })).status).toBe(404);
      expect(
        (await hub.fetch(cas(`/v1/xorb-grants/default/${"a".repeat(64)}`), { method: "POST", headers }))
          .status,
      ).toBe(404);
      expect(
        (
          await hub.fetch(`${hub.url}/v1/telemetry`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{}",
          })
        ).status,
      ).toBe(204);
    });
  });

  it("counts a repository's Xet files as their xorbs, a chunk two files share once, and answers it as usedStorage", async () => {
    const usage = async () =>
      (
        await readJson<Array<{ id: string; storage: number }>>(
          await hub.request("/api/settings/repositories", { token: tokens.bob }),
        )
      ).find((entry) => entry.id === "bob/own")?.storage ?? 0;
    const before = await usage();
    const write = await xetToken("bob/own", "write", "main", "bob");
    const p = remember(packed(prng("accounting", 256_000)));
    expect((await postXorb(write, p.hex, p.xorb.bytes)).status).toBe(200);
    expect(await usage()).toBe(before + p.xorb.bytes.length);
    expect(
      (await postShard(write, uploadShardBytes([shardFile([term(p.xorb)], p.data)], [p.xorb]))).status,
    ).toBe(200);
    // The hub keeps an LFS copy of the file (docs/xet.md); it does not count: the xorb stands for it.
    expect(await usage()).toBe(before + p.xorb.bytes.length);
    // A second file made of the first half of the same chunks adds nothing.
    const half = Math.floor(p.xorb.chunks.length / 2);
    const prefix = p.data.subarray(
      0,
      p.xorb.chunks.slice(0, half).reduce((sum, c) => sum + c.uncompressedLength, 0),
    );
    expect(
      (await postShard(write, uploadShardBytes([shardFile([term(p.xorb, 0, half)], prefix)], []))).status,
    ).toBe(200);
    expect(await usage()).toBe(before + p.xorb.bytes.length);

    const info = await readJson<RepoInfo>(
      await hub.request("/api/models/bob/own?expand[]=usedStorage&expand[]=xetEnabled", {
        token: tokens.bob,
      }),
    );
    expect(info.usedStorage).toBe(await usage());
    expect(info.xetEnabled).toBe(true);
    const plain = await readJson<RepoInfo>(await hub.request("/api/models/bob/own", { token: tokens.bob }));
    expect(plain.usedStorage).toBeUndefined();
  });
});
