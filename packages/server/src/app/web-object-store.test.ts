import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lfsObjectsRepository } from "../git/lfs/lfs-objects.repository.js";
import { readJson, startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { storeFor } from "../test-support/minio.js";
import { commitFiles, pageText } from "../test-support/web.js";

/**
 * Pages that read a file's bytes on the server (a card, the editor) get them from an S3 store too, where
 * `resolve` answers with a redirect to a presigned URL rather than the bytes.
 */
describe("the web site on an S3 object store", () => {
  let hub: InProcessHub;
  let objects: Awaited<ReturnType<typeof storeFor>>;
  let token: string;

  beforeAll(async () => {
    objects = await storeFor("s3");
    hub = await startInProcessHub({ dialect: "sqlite", env: objects.env });
    await hub.createUser("alice");
    token = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/card" } })).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await hub?.stop();
    await objects?.stop();
  });

  it("renders a card stored in LFS, read through the presigned URL, or streamed by the hub when presigning is off", async () => {
    const card = Buffer.from("# Stored in the bucket\n\nRead through a presigned URL.\n");
    const oid = createHash("sha256").update(card).digest("hex");
    // The object as an LFS upload leaves it: in the store, linked to the repository.
    await hub.deps.objectStore.write(oid, card.length, Readable.from([card]));
    const repo = await readJson<{ _id: string }>(await hub.request("/api/models/alice/card", { token }));
    await lfsObjectsRepository.link(hub.db, repo._id, oid, card.length, new Date().toISOString());
    const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${card.length}\n`;
    await commitFiles(hub, token, "alice/card", { "README.md": pointer });

    const resolved = await hub.request("/alice/card/resolve/main/README.md", { token, redirect: "manual" });
    expect(resolved.status).toBe(302);
    expect(await pageText(hub, "/alice/card")).toContain("Read through a presigned URL.");

    // With HUB_S3_PRESIGNED_DOWNLOADS=0 (a store clients cannot reach) the hub streams the bytes itself.
    const streaming = await startInProcessHub({
      dialect: "sqlite",
      env: { ...objects.env, HUB_S3_PRESIGNED_DOWNLOADS: "0" },
    });
    try {
      await streaming.createUser("alice");
      const own = await streaming.createToken("alice");
      const created = await streaming.request("/api/repos", {
        method: "POST",
        token: own,
        json: { repo_id: "alice/card" },
      });
      expect(created.status).toBe(201);
      const id = (
        await readJson<{ _id: string }>(await streaming.request("/api/models/alice/card", { token: own }))
      )._id;
      await lfsObjectsRepository.link(streaming.db, id, oid, card.length, new Date().toISOString());
      await commitFiles(streaming, own, "alice/card", { "README.md": pointer });
      const whole = await streaming.request("/alice/card/resolve/main/README.md", {
        token: own,
        redirect: "manual",
      });
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(card)).toBe(true);
      const part = await streaming.request("/alice/card/resolve/main/README.md", {
        token: own,
        redirect: "manual",
        headers: { range: "bytes=2-7" },
      });
      expect(part.status).toBe(206);
      expect(await part.text()).toBe("Stored");
    } finally {
      await streaming.stop();
    }
  });
});
