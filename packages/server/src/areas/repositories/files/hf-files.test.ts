import { createHash, randomBytes } from "node:crypto";
import {
  createRepo,
  deleteFile,
  downloadFile,
  listFiles,
  listModels,
  repoExists,
  uploadFiles,
} from "@huggingface/hub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHub, type TestHub } from "../../../test-support/hub-process.js";
import { STORE_SUITES, storeFor } from "../../../test-support/minio.js";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe.each(STORE_SUITES)(
  "the official @huggingface/hub client on files, on $dialect, objects on $store",
  (suite) => {
    let hub: TestHub;
    let objects: Awaited<ReturnType<typeof storeFor>>;
    let token: string;
    const repo = { type: "model" as const, name: "alice/files" };
    const credentials = () => ({ accessToken: token, hubUrl: hub.url });

    beforeAll(async () => {
      objects = await storeFor(suite.store);
      hub = await startHub({ dialect: suite.dialect, env: objects.env });
      await hub.createUser("alice");
      token = await hub.createToken("alice");
      await createRepo({ repo, ...credentials() });
    });
    afterAll(async () => {
      await hub?.stop();
      await objects?.stop();
    });

    const big = randomBytes(20 * 1024 * 1024);

    it("uploads a small file and a 20 MB file, the large one through LFS", async () => {
      await uploadFiles({
        repo,
        ...credentials(),
        files: [
          { path: "README.md", content: new Blob(["# Files\n"]) },
          { path: "weights/model.safetensors", content: new Blob([big]) },
        ],
      });
      expect(await repoExists({ repo, ...credentials() })).toBe(true);
      expect(await repoExists({ repo: { type: "model", name: "alice/missing" }, ...credentials() })).toBe(
        false,
      );
    });

    it("lists the files, with LFS details for the large one", async () => {
      const entries = [];
      for await (const entry of listFiles({ repo, recursive: true, ...credentials() })) entries.push(entry);
      const byPath = new Map(entries.map((e) => [e.path, e]));
      expect([...byPath.keys()].sort()).toEqual([
        ".gitattributes",
        "README.md",
        "weights",
        "weights/model.safetensors",
      ]);
      expect(byPath.get("weights")?.type).toBe("directory");
      expect(byPath.get("README.md")).toMatchObject({ type: "file", size: 8 });
      expect(byPath.get("weights/model.safetensors")).toMatchObject({
        type: "file",
        size: big.length,
        lfs: { oid: sha256(big), size: big.length },
      });
    });

    it("downloads whole files and byte ranges of them", async () => {
      const readme = await downloadFile({ repo, path: "README.md", ...credentials() });
      expect(await readme?.text()).toBe("# Files\n");
      const weights = await downloadFile({ repo, path: "weights/model.safetensors", ...credentials() });
      expect(weights?.size).toBe(big.length);
      const slice = new Uint8Array((await weights?.slice(1000, 2000).arrayBuffer()) ?? new ArrayBuffer(0));
      expect(Buffer.from(slice).equals(big.subarray(1000, 2000))).toBe(true);
      const whole = new Uint8Array((await weights?.arrayBuffer()) ?? new ArrayBuffer(0));
      expect(sha256(whole)).toBe(sha256(big));
      expect(await downloadFile({ repo, path: "nope.txt", ...credentials() })).toBeNull();
    });

    it("finds the repository with listModels", async () => {
      const found = [];
      for await (const model of listModels({ search: { owner: "alice" }, ...credentials() }))
        found.push(model.name);
      expect(found).toEqual(["alice/files"]);
    });

    it("deletes a file with a commit", async () => {
      await deleteFile({ repo, path: "README.md", ...credentials() });
      expect(await downloadFile({ repo, path: "README.md", ...credentials() })).toBeNull();
      await expect(deleteFile({ repo, path: "README.md", ...credentials() })).rejects.toThrow(
        /doesn't exist/,
      );
    });
  },
);
