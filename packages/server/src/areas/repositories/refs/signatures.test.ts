import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, CommitItem, CommitSignature } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";

describe.each(DIALECTS)("commit signatures on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let token: string;
  let clone: string;
  let gnupg: string;
  const commits: Record<string, string> = {};
  const keys: Record<string, AccountKey> = {};

  const gpg = (args: string[]) =>
    execFileSync(
      "gpg",
      ["--homedir", gnupg, "--batch", "--pinentry-mode", "loopback", "--passphrase", "", ...args],
      { stdio: "pipe" },
    )
      .toString()
      .trim();
  /** The fingerprint of the newest key (or subkey) gpg lists for the query. */
  const fingerprints = (query: string) =>
    gpg(["--with-colons", "--list-keys", query])
      .split("\n")
      .filter((line) => line.startsWith("fpr:"))
      .map((line) => line.split(":")[9] ?? "");
  const sshKey = (name: string) => {
    const file = path.join(work, name);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", file]);
    return file;
  };
  const register = async (key: string) => {
    const response = await hub.request("/api/me/keys", { method: "POST", token, json: { key } });
    expect(response.status).toBe(201);
    return readJson<AccountKey>(response);
  };
  /** Commits a new file with the author email, signed with the signing configuration given (or not), and notes its id. */
  const commit = async (name: string, email: string, signing: string[] | null) => {
    writeFileSync(path.join(clone, `${name}.txt`), name);
    expect((await git(["add", `${name}.txt`], clone)).code).toBe(0);
    const made = await git(
      [
        "-c",
        `user.email=${email}`,
        ...(signing ?? []),
        "commit",
        ...(signing ? ["-S"] : []),
        "-q",
        "-m",
        name,
      ],
      clone,
      {
        GNUPGHOME: gnupg,
      },
    );
    expect(made.code, made.stderr).toBe(0);
    commits[name] = (await git(["rev-parse", "HEAD"], clone)).stdout.trim();
  };
  const withGpg = (key: string) => ["-c", "gpg.format=openpgp", "-c", `user.signingkey=${key}!`];
  const withSsh = (file: string) => ["-c", "gpg.format=ssh", "-c", `user.signingkey=${file}`];
  const signatureOf = async (name: string) => {
    const response = await hub.request(`/api/models/alice/signed/commit/${commits[name]}`, { token });
    expect(response.status).toBe(200);
    const item = await readJson<CommitItem>(response);
    expect(item.id).toBe(commits[name]);
    return item.signature;
  };
  const signer = (key: AccountKey | undefined) => ({
    id: key?.id,
    type: key?.type,
    fingerprint: key?.fingerprint,
    user: "alice",
  });

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-sig-"));
    gnupg = path.join(work, "gnupg");
    mkdirSync(gnupg, { mode: 0o700 });
    await hub.createUser("alice");
    expect((await hub.cli(["user", "verify-email", "alice"])).code).toBe(0);
    token = await hub.createToken("alice");
    expect(
      (await hub.request("/api/repos", { method: "POST", token, json: { repo_id: "alice/signed" } })).status,
    ).toBe(201);
    expect((await git(["clone", withToken(`${hub.gitUrl}/alice/signed`, token), "clone"], work)).code).toBe(
      0,
    );
    clone = path.join(work, "clone");

    gpg(["--quick-generate-key", "Alice <alice@example.com>", "ed25519", "sign", "never"]);
    const [primary = ""] = fingerprints("alice@example.com");
    keys.gpg = await register(gpg(["--armor", "--export", primary]));
    // A second key that signs with a subkey, as keys kept offline do.
    gpg(["--quick-generate-key", "Alice Laptop <alice@example.com>", "ed25519", "cert", "never"]);
    const laptop = fingerprints("Alice Laptop")[0] ?? "";
    gpg(["--quick-add-key", laptop, "ed25519", "sign", "never"]);
    const subkey = fingerprints("Alice Laptop")[1] ?? "";
    keys.subkey = await register(gpg(["--armor", "--export", laptop]));
    const ssh = sshKey("alice-ssh");
    keys.ssh = await register(readFileSync(`${ssh}.pub`, "utf8"));
    const stranger = sshKey("stranger-ssh");

    await commit("gpg", "alice@example.com", withGpg(primary));
    await commit("gpg-subkey", "Alice@Example.com", withGpg(subkey));
    await commit("ssh", "alice@example.com", withSsh(ssh));
    await commit("plain", "alice@example.com", null);
    await commit("gpg-other-author", "mallory@example.com", withGpg(primary));
    await commit("ssh-other-author", "mallory@example.com", withSsh(ssh));
    await commit("ssh-unregistered", "alice@example.com", withSsh(stranger));
    const push = await git(["push", "-q", "origin", "HEAD:main"], clone);
    expect(push.code, push.stderr).toBe(0);

    // Altered after signing: the message changes, the signature stays.
    for (const name of ["gpg", "ssh"]) {
      const raw = (await git(["cat-file", "commit", commits[name] ?? ""], clone)).stdout;
      const altered = path.join(work, `${name}-altered`);
      writeFileSync(altered, raw.replace(`\n\n${name}\n`, `\n\n${name}, altered\n`));
      const forged = await git(["hash-object", "-t", "commit", "-w", altered], clone);
      commits[`${name}-altered`] = forged.stdout.trim();
      const pushed = await git(
        ["push", "-q", "origin", `${forged.stdout.trim()}:refs/heads/${name}-altered`],
        clone,
      );
      expect(pushed.code, pushed.stderr).toBe(0);
    }
  });
  afterAll(async () => {
    await hub?.stop();
    if (gnupg) execFileSync("gpgconf", ["--homedir", gnupg, "--kill", "gpg-agent"]);
    rmSync(work, { recursive: true, force: true });
  });

  it("verifies GPG (primary key and signing subkey) and SSH signatures by a registered key and the account's email", async () => {
    expect(await signatureOf("gpg")).toEqual({ state: "verified", key: signer(keys.gpg) });
    expect(await signatureOf("gpg-subkey")).toEqual({ state: "verified", key: signer(keys.subkey) });
    expect(await signatureOf("ssh")).toEqual({ state: "verified", key: signer(keys.ssh) });
  });

  it("shows commits without a signature as unsigned", async () => {
    expect(await signatureOf("plain")).toEqual({ state: "unsigned" });
    const initial = await readJson<CommitItem[]>(
      await hub.request("/api/models/alice/signed/commits/main?limit=100", { token }),
    );
    expect(initial.at(-1)?.signature).toEqual({ state: "unsigned" });
  });

  it("leaves a valid signature unverified when the author email is not the key owner's", async () => {
    for (const [name, key] of [
      ["gpg-other-author", keys.gpg],
      ["ssh-other-author", keys.ssh],
    ] as const) {
      expect(await signatureOf(name), name).toEqual({
        state: "unverified",
        reason: "email_mismatch",
        key: signer(key),
      });
    }
  });

  it("leaves a signature by an unregistered key unverified", async () => {
    expect(await signatureOf("ssh-unregistered")).toEqual({ state: "unverified", reason: "unknown_key" });
  });

  it("leaves a commit altered after signing unverified", async () => {
    for (const [name, key] of [
      ["gpg-altered", keys.gpg],
      ["ssh-altered", keys.ssh],
    ] as const) {
      expect(await signatureOf(name), name).toEqual({
        state: "unverified",
        reason: "bad_signature",
        key: signer(key),
      });
    }
  });

  it("shows every commit's state in the history, newest first", async () => {
    const response = await hub.request("/api/models/alice/signed/commits/main", { token });
    const items = await readJson<CommitItem[]>(response);
    const states = Object.fromEntries(
      items.map((item): [string, CommitSignature] => [item.title, item.signature]),
    );
    expect(states).toMatchObject({
      gpg: { state: "verified" },
      "gpg-subkey": { state: "verified" },
      ssh: { state: "verified" },
      plain: { state: "unsigned" },
      "gpg-other-author": { state: "unverified", reason: "email_mismatch" },
      "ssh-other-author": { state: "unverified", reason: "email_mismatch" },
      "ssh-unregistered": { state: "unverified", reason: "unknown_key" },
    });
    expect(items.map((item) => item.title).slice(0, 2)).toEqual(["ssh-unregistered", "ssh-other-author"]);
  });

  it("answers 404 for a revision that names no commit", async () => {
    const response = await hub.request("/api/models/alice/signed/commit/no-such-branch", { token });
    expect(response.status).toBe(404);
  });

  it("turns what a removed key signed unverified on the next request", async () => {
    for (const [name, key] of [
      ["ssh", keys.ssh],
      ["gpg", keys.gpg],
    ] as const) {
      expect(await signatureOf(name)).toMatchObject({ state: "verified" });
      expect((await hub.request(`/api/me/keys/${key?.id}`, { method: "DELETE", token })).status).toBe(204);
      expect(await signatureOf(name), name).toEqual({ state: "unverified", reason: "unknown_key" });
    }
    expect(await signatureOf("gpg-subkey")).toMatchObject({ state: "verified" });
  });
});
