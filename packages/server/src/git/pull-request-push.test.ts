import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import type { ApiError, DiscussionDetails } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../test-support/databases.js";
import { git, lfsGitConfig, sshCommand, type GitResult, withToken } from "../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../test-support/hub-process.js";

/**
 * `git push origin HEAD:refs/pr/N` over HTTPS and SSH with the real git,
 * git-lfs and OpenSSH clients against a real hubd: who may push to which pull
 * request, what is refused (and left unchanged), the pull request's timeline,
 * LFS uploads for pull requests, and a merge racing pushes to its target.
 */
describe.each(DIALECTS)("pushing to pull requests with the real git clients on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let lfsConfig: string;
  const tokens: Record<string, string> = {};
  const keyFiles: Record<string, string> = {};
  const repoId = "alice/prs";
  const api = `/api/models/${repoId}`;
  const nums: Record<string, number> = {};

  const dir = (name: string) => path.join(work, name);
  const httpsUrl = (who: string) => withToken(`${hub.gitUrl}/${repoId}.git`, tokens[who] ?? "");
  const sshUrl = () => `${hub.sshUrl}/${repoId}.git`;
  const viaSsh = (who: string, args: string[], cwd = work, env: Record<string, string> = {}) =>
    git(args, cwd, {
      GIT_SSH_COMMAND: sshCommand(keyFiles[who] ?? ""),
      ...env,
    });
  const withLfs = (args: string[], cwd: string) => git(args, cwd, { GIT_CONFIG_GLOBAL: lfsConfig });

  /** Every ref of the repository and its commit, as an anonymous ls-remote sees them. */
  async function refs(): Promise<Record<string, string>> {
    const listed = await git(["ls-remote", `${hub.gitUrl}/${repoId}.git`], work);
    expect(listed.code, listed.stderr).toBe(0);
    return Object.fromEntries(
      listed.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [sha = "", ref = ""] = line.split("\t");
          return [ref, sha];
        }),
    );
  }
  async function commitFile(cwd: string, file: string, content: string | Buffer, message: string) {
    writeFileSync(path.join(cwd, file), content);
    expect((await git(["add", file], cwd)).code).toBe(0);
    const committed = await git(["commit", "-q", "-m", message], cwd);
    expect(committed.code, committed.stderr).toBe(0);
    return (await git(["rev-parse", "HEAD"], cwd)).stdout.trim();
  }
  async function openPullRequest(who: string, title: string): Promise<number> {
    const response = await hub.request(`${api}/discussions`, {
      method: "POST",
      token: tokens[who],
      json: { title, description: "", pullRequest: true },
    });
    expect(response.status).toBe(200);
    return (await readJson<{ num: number }>(response)).num;
  }
  async function details(num: number): Promise<DiscussionDetails> {
    return readJson<DiscussionDetails>(
      await hub.request(`${api}/discussions/${num}`, { token: tokens.alice }),
    );
  }
  const commitEvents = async (num: number) =>
    (await details(num)).events.flatMap((event) => (event.type === "commit" ? [event.data] : []));
  const isAncestor = async (cwd: string, ancestor: string, commit: string) =>
    (await git(["merge-base", "--is-ancestor", ancestor, commit], cwd)).code === 0;
  const expectRefused = (push: GitResult, message: RegExp) => {
    expect(push.code, push.stderr).not.toBe(0);
    expect(push.stderr).toMatch(message);
  };

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-pr-push-"));
    lfsConfig = lfsGitConfig(work, true);
    for (const who of ["alice", "bob", "carol", "dave"]) await hub.createUser(who);
    tokens.alice = await hub.createToken("alice");
    // Bob and Carol may only take part in discussions; Dave's read token may not even do that.
    tokens.bob = await hub.createToken("bob", ["--scopes", "community:write"]);
    tokens.carol = await hub.createToken("carol", ["--scopes", "community:write"]);
    tokens.dave = await hub.createToken("dave", ["--role", "read"]);
    for (const who of ["alice", "bob"]) {
      const file = path.join(work, `${who}_key`);
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", who, "-f", file]);
      keyFiles[who] = file;
      const session = await hub.createToken(who);
      const added = await hub.request("/api/me/keys", {
        method: "POST",
        token: session,
        json: { key: readFileSync(`${file}.pub`, "utf8") },
      });
      expect(added.status).toBe(201);
    }
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: tokens.alice,
      json: { repo_id: repoId },
    });
    expect(created.status).toBe(201);

    // Bob's open pull request, Carol's, one of Bob's that Alice merged, one Bob closed, and a discussion.
    nums.bob = await openPullRequest("bob", "Bob's change");
    nums.carol = await openPullRequest("carol", "Carol's change");
    nums.merged = await openPullRequest("bob", "Merged already");
    nums.closed = await openPullRequest("bob", "Closed already");
    const discussion = await hub.request(`${api}/discussions`, {
      method: "POST",
      token: tokens.carol,
      json: { title: "A question", description: "Why?" },
    });
    nums.discussion = (await readJson<{ num: number }>(discussion)).num;

    expect((await git(["clone", "-q", httpsUrl("bob"), "bob"], work)).code).toBe(0);
    await commitFile(dir("bob"), "merged.txt", "merged\n", "For the merged one");
    const toMerge = await git(["push", "origin", `HEAD:refs/pr/${nums.merged}`], dir("bob"));
    expect(toMerge.code, toMerge.stderr).toBe(0);
    const merged = await hub.request(`${api}/discussions/${nums.merged}/merge`, {
      method: "POST",
      token: tokens.alice,
    });
    expect(merged.status).toBe(200);
    const closed = await hub.request(`${api}/discussions/${nums.closed}/status`, {
      method: "POST",
      token: tokens.bob,
      json: { status: "closed" },
    });
    expect(closed.status).toBe(200);
    expect((await git(["fetch", "-q", "origin", "main"], dir("bob"))).code).toBe(0);
    expect((await git(["checkout", "-q", "-B", "work", "origin/main"], dir("bob"))).code).toBe(0);
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("lets the author push to their pull request over HTTPS, where a fresh clone fetches it and its timeline shows the commits", async () => {
    const first = await commitFile(dir("bob"), "a.txt", "one\n", "First of Bob's commits");
    const second = await commitFile(dir("bob"), "b.txt", "two\n", "Second of Bob's commits");
    const push = await git(["push", "origin", `HEAD:refs/pr/${nums.bob}`], dir("bob"));
    expect(push.code, push.stderr).toBe(0);
    expect((await refs())[`refs/pr/${nums.bob}`]).toBe(second);

    const fresh = await git(["clone", "-q", `${hub.gitUrl}/${repoId}.git`, "fresh-https"], work);
    expect(fresh.code, fresh.stderr).toBe(0);
    const fetched = await git(["fetch", "-q", "origin", `refs/pr/${nums.bob}`], dir("fresh-https"));
    expect(fetched.code, fetched.stderr).toBe(0);
    expect((await git(["rev-parse", "FETCH_HEAD"], dir("fresh-https"))).stdout.trim()).toBe(second);
    expect((await git(["show", "FETCH_HEAD:b.txt"], dir("fresh-https"))).stdout).toBe("two\n");

    expect(await commitEvents(nums.bob ?? 0)).toEqual([
      { oid: first, subject: "First of Bob's commits" },
      { oid: second, subject: "Second of Bob's commits" },
    ]);
    const commitEvent = (await details(nums.bob ?? 0)).events.find((event) => event.type === "commit");
    expect(commitEvent?.author?.name).toBe("bob");
  });

  it("lets the author force-push to their pull request unless the repository denies force pushes", async () => {
    const before = (await refs())[`refs/pr/${nums.bob}`];
    const amended = await git(["commit", "-q", "--amend", "-m", "Second, amended"], dir("bob"));
    expect(amended.code).toBe(0);
    const rewritten = (await git(["rev-parse", "HEAD"], dir("bob"))).stdout.trim();
    const settings = (denyForcePush: boolean) =>
      hub.request(`${api}/settings`, { method: "PUT", token: tokens.alice, json: { denyForcePush } });

    expect((await settings(true)).status).toBe(200);
    const denied = await git(["push", "--force", "origin", `HEAD:refs/pr/${nums.bob}`], dir("bob"));
    expectRefused(
      denied,
      new RegExp(`refs/pr/${nums.bob}: this repository denies force pushes \\(denyForcePush\\)`),
    );
    expect((await refs())[`refs/pr/${nums.bob}`]).toBe(before);

    expect((await settings(false)).status).toBe(200);
    const forced = await git(["push", "--force", "origin", `HEAD:refs/pr/${nums.bob}`], dir("bob"));
    expect(forced.code, forced.stderr).toBe(0);
    expect((await refs())[`refs/pr/${nums.bob}`]).toBe(rewritten);
    expect((await commitEvents(nums.bob ?? 0)).at(-1)).toEqual({
      oid: rewritten,
      subject: "Second, amended",
    });
  });

  it("refuses the author's pushes to other pull requests, branches, tags and deletions with a message git prints, and changes nothing", async () => {
    await commitFile(dir("bob"), "c.txt", "three\n", "Not to be accepted");
    const before = await refs();
    for (const [refspec, message] of [
      [
        `HEAD:refs/pr/${nums.carol}`,
        new RegExp(
          `refs/pr/${nums.carol}: pull request #${nums.carol} is not yours; push to your own pull request or ask a writer`,
        ),
      ],
      [
        `HEAD:refs/pr/${nums.merged}`,
        new RegExp(`refs/pr/${nums.merged}: pull request #${nums.merged} is merged; open a new pull request`),
      ],
      [
        `HEAD:refs/pr/${nums.closed}`,
        new RegExp(`refs/pr/${nums.closed}: pull request #${nums.closed} is closed; reopen it`),
      ],
      [`HEAD:refs/pr/${nums.discussion}`, new RegExp(`there is no pull request #${nums.discussion}`)],
      ["HEAD:refs/pr/99", /refs\/pr\/99: there is no pull request #99; open one first/],
      ["HEAD:refs/heads/main", /refs\/heads\/main: only the repository's writers may push branches and tags/],
      ["HEAD:refs/heads/bob-branch", /refs\/heads\/bob-branch: only the repository's writers may push/],
      ["HEAD:refs/tags/v1", /refs\/tags\/v1: only the repository's writers may push/],
      [
        `:refs/pr/${nums.bob}`,
        new RegExp(
          `refs/pr/${nums.bob}: pull request refs cannot be deleted; close pull request #${nums.bob} instead`,
        ),
      ],
    ] as const) {
      const push = await git(["push", "origin", refspec], dir("bob"));
      expectRefused(push, message);
      expect(push.stderr, refspec).toMatch(/pre-receive hook declined/);
    }
    // One refused ref refuses the whole push: their own pull request does not move either.
    const mixed = await git(
      ["push", "origin", `HEAD:refs/pr/${nums.bob}`, "HEAD:refs/heads/main"],
      dir("bob"),
    );
    expectRefused(mixed, /refs\/heads\/main: only the repository's writers/);
    // A token without community:write may not push at all, and is refused before sending anything.
    const dave = await git(
      ["push", withToken(`${hub.gitUrl}/${repoId}.git`, tokens.dave ?? ""), `HEAD:refs/pr/${nums.bob}`],
      dir("bob"),
    );
    expectRefused(dave, /remote: You may not push to alice\/prs: This token lacks the repo:write scope/);
    // Even a writer may not delete a pull request's ref.
    const deletion = await git(["push", httpsUrl("alice"), `:refs/pr/${nums.bob}`], dir("bob"));
    expectRefused(deletion, /pull request refs cannot be deleted/);
    expect(await refs()).toEqual(before);
  });

  it("refuses a caller with no open pull request of their own before git starts", async () => {
    // Carol closes her only pull request: she has nothing left to push to.
    const closed = await hub.request(`${api}/discussions/${nums.carol}/status`, {
      method: "POST",
      token: tokens.carol,
      json: { status: "closed" },
    });
    expect(closed.status).toBe(200);
    const push = await git(["push", httpsUrl("carol"), `HEAD:refs/pr/${nums.carol}`], dir("bob"));
    expectRefused(
      push,
      /remote: You may not push to alice\/prs: Only the repository's writers may push branches and tags, and no open pull request here is yours/,
    );
    expect(push.stderr).not.toMatch(/pre-receive hook/);
    const reopened = await hub.request(`${api}/discussions/${nums.carol}/status`, {
      method: "POST",
      token: tokens.carol,
      json: { status: "open" },
    });
    expect(reopened.status).toBe(200);
  });

  it("lets a writer push to anyone's open pull request, and to no merged one", async () => {
    expect((await git(["clone", "-q", httpsUrl("alice"), "alice"], work)).code).toBe(0);
    expect((await git(["fetch", "-q", "origin", `refs/pr/${nums.carol}`], dir("alice"))).code).toBe(0);
    expect((await git(["checkout", "-q", "-B", "review", "FETCH_HEAD"], dir("alice"))).code).toBe(0);
    const fix = await commitFile(dir("alice"), "review.txt", "looks good\n", "A writer's fix-up");
    const push = await git(["push", "origin", `HEAD:refs/pr/${nums.carol}`], dir("alice"));
    expect(push.code, push.stderr).toBe(0);
    expect((await refs())[`refs/pr/${nums.carol}`]).toBe(fix);
    const timeline = await details(nums.carol ?? 0);
    expect(
      timeline.events.filter((event) => event.type === "commit").map((event) => event.author?.name),
    ).toEqual(["alice"]);
    const merged = await git(["push", "origin", `+HEAD:refs/pr/${nums.merged}`], dir("alice"));
    expectRefused(merged, /is merged; open a new pull request/);
  });

  it("lets the author push to their pull request over SSH, and refuses the rest there too", async () => {
    const clone = await viaSsh("bob", ["clone", "-q", sshUrl(), "bob-ssh"]);
    expect(clone.code, clone.stderr).toBe(0);
    const cwd = dir("bob-ssh");
    expect((await viaSsh("bob", ["fetch", "-q", "origin", `refs/pr/${nums.bob}`], cwd)).code).toBe(0);
    expect((await git(["checkout", "-q", "-B", "work", "FETCH_HEAD"], cwd)).code).toBe(0);
    const head = await commitFile(cwd, "ssh.txt", "over ssh\n", "Pushed over SSH");
    const push = await viaSsh("bob", ["push", "origin", `HEAD:refs/pr/${nums.bob}`], cwd);
    expect(push.code, push.stderr).toBe(0);

    const fresh = await viaSsh("alice", ["clone", "-q", sshUrl(), "fresh-ssh"]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(
      (await viaSsh("alice", ["fetch", "-q", "origin", `refs/pr/${nums.bob}`], dir("fresh-ssh"))).code,
    ).toBe(0);
    expect((await git(["rev-parse", "FETCH_HEAD"], dir("fresh-ssh"))).stdout.trim()).toBe(head);
    expect((await commitEvents(nums.bob ?? 0)).at(-1)).toEqual({ oid: head, subject: "Pushed over SSH" });

    const before = await refs();
    expectRefused(
      await viaSsh("bob", ["push", "origin", `+HEAD:refs/pr/${nums.carol}`], cwd),
      new RegExp(`pull request #${nums.carol} is not yours`),
    );
    expectRefused(
      await viaSsh("bob", ["push", "origin", "HEAD:refs/heads/main"], cwd),
      /refs\/heads\/main: only the repository's writers may push/,
    );
    expectRefused(
      await viaSsh("bob", ["push", "origin", `:refs/pr/${nums.bob}`], cwd),
      /pull request refs cannot be deleted/,
    );
    expect(await refs()).toEqual(before);
  });

  it("takes the author's Git LFS files pushed to their pull request, over HTTPS and SSH", async () => {
    const cwd = dir("bob");
    expect((await git(["fetch", "-q", "origin", `refs/pr/${nums.bob}`], cwd)).code).toBe(0);
    expect((await git(["reset", "-q", "--hard", "FETCH_HEAD"], cwd)).code).toBe(0);
    const weights = Buffer.alloc(300_000, 5);
    writeFileSync(path.join(cwd, "weights.safetensors"), weights);
    expect((await withLfs(["add", "weights.safetensors"], cwd)).code).toBe(0);
    expect((await withLfs(["commit", "-q", "-m", "Weights for the pull request"], cwd)).code).toBe(0);
    const push = await withLfs(["push", "origin", `HEAD:refs/pr/${nums.bob}`], cwd);
    expect(push.code, push.stderr).toBe(0);

    const sshDir = dir("bob-ssh");
    expect((await viaSsh("bob", ["fetch", "-q", "origin", `refs/pr/${nums.bob}`], sshDir)).code).toBe(0);
    expect((await git(["reset", "-q", "--hard", "FETCH_HEAD"], sshDir)).code).toBe(0);
    const more = Buffer.alloc(200_000, 6);
    writeFileSync(path.join(sshDir, "more.safetensors"), more);
    const lfsSsh = (args: string[]) => viaSsh("bob", args, sshDir, { GIT_CONFIG_GLOBAL: lfsConfig });
    expect((await lfsSsh(["add", "more.safetensors"])).code).toBe(0);
    expect((await lfsSsh(["commit", "-q", "-m", "More weights over SSH"])).code).toBe(0);
    const sshPush = await lfsSsh(["push", "origin", `HEAD:refs/pr/${nums.bob}`]);
    expect(sshPush.code, sshPush.stderr).toBe(0);

    const clone = await withLfs(["clone", "-q", `${hub.gitUrl}/${repoId}.git`, "fresh-lfs"], work);
    expect(clone.code, clone.stderr).toBe(0);
    const fetched = await withLfs(["fetch", "-q", "origin", `refs/pr/${nums.bob}`], dir("fresh-lfs"));
    expect(fetched.code, fetched.stderr).toBe(0);
    const checkout = await withLfs(["checkout", "-q", "FETCH_HEAD"], dir("fresh-lfs"));
    expect(checkout.code, checkout.stderr).toBe(0);
    expect(readFileSync(path.join(dir("fresh-lfs"), "weights.safetensors")).equals(weights)).toBe(true);
    expect(readFileSync(path.join(dir("fresh-lfs"), "more.safetensors")).equals(more)).toBe(true);
  });

  it("answers LFS upload batches of non-writers for their pull requests and for no ref, as the Python client's create_pr sends", async () => {
    const content = Buffer.from("an object for a pull request a commit will open\n");
    const oid = createHash("sha256").update(content).digest("hex");
    const batch = (who: string, ref?: string) =>
      fetch(`${hub.gitUrl}/${repoId}.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`x:${tokens[who] ?? ""}`).toString("base64")}`,
          "content-type": "application/vnd.git-lfs+json",
          accept: "application/vnd.git-lfs+json",
        },
        body: JSON.stringify({
          operation: "upload",
          transfers: ["basic"],
          objects: [{ oid, size: content.length }],
          ...(ref === undefined ? {} : { ref: { name: ref } }),
        }),
      });
    const noRef = await batch("bob");
    expect(noRef.status).toBe(200);
    const answer = (await noRef.json()) as {
      objects: Array<{ actions?: { upload?: { href: string }; verify?: { href: string } } }>;
    };
    const actions = answer.objects[0]?.actions;
    const upload = await fetch(actions?.upload?.href ?? "", { method: "PUT", body: content });
    expect(upload.status).toBe(200);
    const verify = await fetch(actions?.verify?.href ?? "", {
      method: "POST",
      headers: { "content-type": "application/vnd.git-lfs+json" },
      body: JSON.stringify({ oid, size: content.length }),
    });
    expect(verify.status).toBe(200);
    expect((await batch("bob", `refs/pr/${nums.bob}`)).status).toBe(200);

    for (const [who, ref, status, message] of [
      ["bob", "main", 403, /main: only the repository's writers may push branches and tags/],
      ["bob", "refs/heads/main", 403, /only the repository's writers/],
      ["bob", `refs/pr/${nums.carol}`, 403, /is not yours/],
      ["bob", `refs/pr/${nums.merged}`, 403, /is merged/],
      ["dave", undefined, 403, /lacks the repo:write scope/],
    ] as const) {
      const refused = await batch(who, ref);
      expect(refused.status, `${who} ${ref}`).toBe(status);
      expect(((await refused.json()) as { message: string }).message).toMatch(message);
    }
    // Writers upload as before, whatever the ref.
    expect((await batch("alice", "refs/heads/main")).status).toBe(200);
  });

  it("loses nothing when a merge races pushes to its target branch, run after run", async () => {
    expect((await git(["clone", "-q", httpsUrl("bob"), "bob-race"], work)).code).toBe(0);
    expect((await git(["clone", "-q", httpsUrl("alice"), "alice-race"], work)).code).toBe(0);
    const author = dir("bob-race");
    const writer = dir("alice-race");
    for (let run = 0; run < 6; run++) {
      const num = await openPullRequest("bob", `Race ${run}`);
      expect((await git(["fetch", "-q", "origin", "main"], author)).code).toBe(0);
      expect((await git(["checkout", "-q", "-B", `race-${run}`, "origin/main"], author)).code).toBe(0);
      const prHead = await commitFile(
        author,
        `pr-${run}.txt`,
        `pull request ${run}\n`,
        `Pull request ${run}`,
      );
      const prPush = await git(["push", "origin", `HEAD:refs/pr/${num}`], author);
      expect(prPush.code, prPush.stderr).toBe(0);

      expect((await git(["fetch", "-q", "origin", "main"], writer)).code).toBe(0);
      expect((await git(["checkout", "-q", "-B", "main", "origin/main"], writer)).code).toBe(0);
      const pushed = await commitFile(writer, `main-${run}.txt`, `main ${run}\n`, `Main ${run}`);
      const [push, merge] = await Promise.all([
        git(["push", "origin", "HEAD:refs/heads/main"], writer),
        new Promise((resolve) => setTimeout(resolve, run * 30)).then(() =>
          hub.request(`${api}/discussions/${num}/merge`, { method: "POST", token: tokens.alice }),
        ),
      ]);
      // A push that lost the race was told so (git's compare-and-swap), so its author merges and pushes again.
      let pushResult = push;
      for (let retry = 0; pushResult.code !== 0 && retry < 3; retry++) {
        expect(pushResult.stderr).toMatch(/rejected|failed to update|cannot lock|fetch first/);
        expect((await git(["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], writer)).code).toBe(
          0,
        );
        pushResult = await git(["push", "origin", "HEAD:refs/heads/main"], writer);
      }
      expect(pushResult.code, pushResult.stderr).toBe(0);

      expect((await git(["fetch", "-q", "origin", "main"], writer)).code).toBe(0);
      const main = (await git(["rev-parse", "origin/main"], writer)).stdout.trim();
      expect(await isAncestor(writer, pushed, main), `run ${run}: the pushed commit is on main`).toBe(true);
      const status = (await details(num)).status;
      if (merge.status === 200) {
        const { mergeCommitId } = await readJson<{ mergeCommitId: string }>(merge);
        expect(status).toBe("merged");
        expect((await git(["fetch", "-q", "origin", `refs/pr/${num}`], writer)).code).toBe(0);
        expect(await isAncestor(writer, prHead, main), `run ${run}: the pull request is on main`).toBe(true);
        expect(await isAncestor(writer, mergeCommitId, main)).toBe(true);
      } else {
        expect(merge.status).toBe(409);
        expect((await readJson<ApiError>(merge)).code).toBe("branch_moved");
        expect(status).not.toBe("merged");
      }
    }
  });
});
