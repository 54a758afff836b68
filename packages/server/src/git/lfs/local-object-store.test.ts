import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { createLocalObjectStore } from "./local-object-store.js";
import { ObjectMismatchError } from "./object-store.js";

/** Deterministic bytes, so a large object needs no fixture file. */
function bytesOf(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < size; i += 4) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out.writeUInt32LE(state >>> 0, Math.min(i, size - 4));
  }
  return out;
}

/** The bytes as a socket delivers them: in 64 KiB chunks. */
const streamOf = (content: Buffer) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < content.length; at += 64 * 1024) yield content.subarray(at, at + 64 * 1024);
    })(),
  );

const oidOf = (content: Buffer) => createHash("sha256").update(content).digest("hex");

describe("the local object store", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-objects-"));
  const store = createLocalObjectStore(dataDir);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // 40 MiB and a ragged size are hashed on worker threads (from 16 MiB on); 1 MiB on the event loop.
  it.each([
    ["a small object", 1024 * 1024 + 3],
    ["a large object", 40 * 1024 * 1024],
    ["a large object of a ragged size", 17 * 1024 * 1024 + 12_345],
  ])("stores %s that hashes to its id, byte for byte", async (_name, size) => {
    const content = bytesOf(size, size);
    const oid = oidOf(content);
    await store.write(oid, size, streamOf(content));
    expect(await store.size(oid)).toBe(size);
    const chunks: Buffer[] = [];
    for await (const chunk of store.read(oid)) chunks.push(chunk as Buffer);
    expect(oidOf(Buffer.concat(chunks))).toBe(oid);
  });

  it("is reachable while its data dir is there, and says why not once it is gone", async () => {
    await expect(store.reachable(AbortSignal.timeout(5000))).resolves.toBeUndefined();
    const gone = createLocalObjectStore(path.join(dataDir, "not-mounted"));
    await expect(gone.reachable(AbortSignal.timeout(5000))).rejects.toThrow(/ENOENT/);
  });

  it("hashes several large uploads at once, each against its own id", async () => {
    const contents = [1, 2, 3].map((seed) => bytesOf(20 * 1024 * 1024 + seed, seed));
    await Promise.all(
      contents.map((content) => store.write(oidOf(content), content.length, streamOf(content))),
    );
    for (const content of contents) expect(await store.size(oidOf(content))).toBe(content.length);
    const listed = new Map<string, number>();
    for await (const item of store.list()) listed.set(item.key, item.size);
    for (const content of contents) expect(listed.get(oidOf(content))).toBe(content.length);
  });

  it("refuses a large object whose bytes do not hash to its id, and keeps nothing of it", async () => {
    const content = bytesOf(24 * 1024 * 1024, 7);
    const claimed = oidOf(bytesOf(24 * 1024 * 1024, 8));
    await expect(store.write(claimed, content.length, streamOf(content))).rejects.toBeInstanceOf(
      ObjectMismatchError,
    );
    expect(await store.size(claimed)).toBeNull();
    expect(readdirSync(path.join(dataDir, "lfs", "tmp"))).toEqual([]);
  });

  it("keeps nothing of a large upload whose sender goes away, and leaves no file open", async () => {
    const content = bytesOf(30 * 1024 * 1024, 10);
    const oid = oidOf(content);
    // The files this process holds open in the store's temporary directory (a removed one still shows).
    const openTemporaries = () =>
      readdirSync("/proc/self/fd")
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return "";
          }
        })
        .filter((target) => target.startsWith(path.join(dataDir, "lfs", "tmp")));
    const vanishing = Readable.from(
      (async function* () {
        yield* streamOf(content.subarray(0, 20 * 1024 * 1024));
        throw Object.assign(new Error("aborted"), { code: "ECONNRESET" });
      })(),
    );
    await expect(store.write(oid, content.length, vanishing)).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(await store.size(oid)).toBeNull();
    expect(readdirSync(path.join(dataDir, "lfs", "tmp"))).toEqual([]);
    expect(openTemporaries()).toEqual([]);
  });

  it("refuses more or fewer bytes than announced", async () => {
    const content = bytesOf(18 * 1024 * 1024, 9);
    const oid = oidOf(content);
    await expect(store.write(oid, content.length - 1, streamOf(content))).rejects.toBeInstanceOf(
      ObjectMismatchError,
    );
    await expect(store.write(oid, content.length + 1, streamOf(content))).rejects.toBeInstanceOf(
      ObjectMismatchError,
    );
    expect(await store.size(oid)).toBeNull();
    // The workers keep serving after refused jobs.
    await store.write(oid, content.length, streamOf(content));
    expect(
      oidOf(await readFile(path.join(dataDir, "lfs", "objects", oid.slice(0, 2), oid.slice(2, 4), oid))),
    ).toBe(oid);
  });

  it("keeps a namespace's objects apart, stores each once, and reads them by range", async () => {
    const xorbs = store.namespace("xet/xorbs");
    const key = "ab".repeat(32);
    const content = bytesOf(300_000, 11);
    await Promise.all([xorbs.put(key, content), xorbs.put(key, content)]).then((stored) =>
      expect(stored.filter(Boolean)).toHaveLength(1),
    );
    expect(await xorbs.put(key, bytesOf(10, 12))).toBe(false);
    expect(await xorbs.size(key)).toBe(content.length);
    expect(await store.size(key)).toBeNull();
    const part: Buffer[] = [];
    for await (const chunk of xorbs.read(key, { start: 1000, end: 1999 })) part.push(chunk as Buffer);
    expect(Buffer.concat(part)).toEqual(content.subarray(1000, 2000));
    expect(
      await readFile(path.join(dataDir, "lfs", "xet", "xorbs", key.slice(0, 2), key.slice(2, 4), key)),
    ).toEqual(content);
    expect(readdirSync(path.join(dataDir, "lfs", "tmp"))).toEqual([]);
    const listed = [];
    for await (const item of xorbs.list()) listed.push(item);
    expect(listed).toEqual([{ key, size: content.length }]);
    const objects = [];
    for await (const item of store.list()) objects.push(item.key);
    expect(objects).not.toContain(key);
    await xorbs.remove(key);
    expect(await xorbs.size(key)).toBeNull();
    expect(() => store.namespace("objects")).toThrow();
    expect(() => store.namespace("../up")).toThrow();
    expect(() => xorbs.size("../../objects")).toThrow();
  });
});
