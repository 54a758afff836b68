import { createHash, randomBytes } from "node:crypto";
import { createRepo, downloadFile, uploadFiles } from "@huggingface/hub";
import type { DiscussionDetails, RepoInfo } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** `@huggingface/hub`'s `isPullRequest` (create_pr on preupload and commit, an LFS batch without a ref). */
describe("pull requests from the official @huggingface/hub client", () => {
  let hub: TestHub;
  let alice: string;
  const repo = { type: "model" as const, name: "alice/js-pr" };

  beforeAll(async () => {
    hub = await startHub();
    await hub.createUser("alice");
    alice = await hub.createToken("alice");
    await createRepo({ repo, accessToken: alice, hubUrl: hub.url });
    await uploadFiles({
      repo,
      accessToken: alice,
      hubUrl: hub.url,
      files: [{ path: "a.txt", content: new Blob(["a"]) }],
    });
  });
  afterAll(() => hub?.stop());

  it("opens a pull request holding a small and an LFS file, and leaves main where it was", async () => {
    const head = async () =>
      (await readJson<RepoInfo>(await hub.request(`/api/models/${repo.name}`, { token: alice }))).sha;
    const before = await head();
    const big = randomBytes(12 * 1024 * 1024);
    const result = await uploadFiles({
      repo,
      accessToken: alice,
      hubUrl: hub.url,
      isPullRequest: true,
      commitTitle: "Propose weights",
      files: [
        { path: "notes.md", content: new Blob(["# Notes\n"]) },
        { path: "weights.bin", content: new Blob([big]) },
      ],
    });
    expect(result?.pullRequestUrl).toMatch(new RegExp(`^${hub.url}/alice/js-pr/discussions/\\d+$`));
    const num = Number(result?.pullRequestUrl?.split("/").at(-1));
    expect(await head()).toBe(before);
    const pr = await readJson<DiscussionDetails>(
      await hub.request(`/api/models/${repo.name}/discussions/${num}`, { token: alice }),
    );
    expect(pr).toMatchObject({ title: "Propose weights", status: "open", isPullRequest: true });
    expect(pr.changes?.head).toBe(result?.commit.oid);
    const blob = await downloadFile({
      repo,
      path: "weights.bin",
      revision: `refs/pr/${num}`,
      accessToken: alice,
      hubUrl: hub.url,
    });
    expect(sha256(new Uint8Array(await (blob as Blob).arrayBuffer()))).toBe(sha256(big));
    expect(await downloadFile({ repo, path: "weights.bin", accessToken: alice, hubUrl: hub.url })).toBeNull();
  });
});
