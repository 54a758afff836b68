import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, ApiError } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";

describe.each(DIALECTS)("account keys on %s", (dialect) => {
  let hub: InProcessHub;
  let work: string;
  let token: string;
  const sshKey = (type: string, bits?: number, format?: string) => {
    const file = path.join(
      work,
      `${type}-${bits ?? 0}-${format ?? "ssh"}-${Math.random().toString(36).slice(2)}`,
    );
    execFileSync("ssh-keygen", [
      "-q",
      "-t",
      type,
      ...(bits ? ["-b", String(bits)] : []),
      ...(format ? ["-m", format] : []),
      "-N",
      "",
      "-C",
      `${type}@laptop`,
      "-f",
      file,
    ]);
    return { publicKey: readFileSync(`${file}.pub`, "utf8"), privateKey: readFileSync(file, "utf8") };
  };
  const gpg = (args: string[], input?: string) =>
    execFileSync(
      "gpg",
      [
        "--homedir",
        path.join(work, "gnupg"),
        "--batch",
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        "",
        ...args,
      ],
      input !== undefined ? { input } : {},
    ).toString();
  const gpgKey = (email: string) => {
    gpg(["--quick-generate-key", `Alice <${email}>`, "ed25519", "sign", "never"]);
    return {
      publicKey: gpg(["--armor", "--export", email]),
      privateKey: gpg(["--armor", "--export-secret-keys", email]),
    };
  };
  const add = (key: string, credential = token, title?: string) =>
    hub.request("/api/me/keys", {
      method: "POST",
      token: credential,
      json: { key, ...(title ? { title } : {}) },
    });

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-keys-"));
    execFileSync("mkdir", ["-m", "700", path.join(work, "gnupg")]);
    await hub.createUser("alice");
    await hub.createUser("bob");
    token = await hub.createToken("alice");
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("adds ed25519, ECDSA and RSA keys with fingerprints ssh-keygen agrees with, lists and removes them", async () => {
    for (const [type, bits] of [
      ["ed25519", undefined],
      ["ecdsa", 256],
      ["rsa", 2048],
    ] as const) {
      const { publicKey } = sshKey(type, bits);
      const response = await add(publicKey);
      expect(response.status, type).toBe(201);
      const key = await readJson<AccountKey>(response);
      const expected = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", "-"], { input: publicKey })
        .toString()
        .split(" ")[1];
      expect(key).toMatchObject({
        type: "ssh",
        fingerprint: expected,
        title: `${type}@laptop`,
        last_used_at: null,
      });
      expect(key.key).toBe(publicKey.trim().split(" ").slice(0, 2).join(" "));
    }
    const listed = await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token }));
    expect(listed.map((k) => k.algorithm)).toEqual(["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"]);
    expect((await hub.request(`/api/me/keys/${listed[0]?.id}`, { method: "DELETE", token })).status).toBe(
      204,
    );
    expect((await hub.request(`/api/me/keys/${listed[0]?.id}`, { method: "DELETE", token })).status).toBe(
      404,
    );
    expect((await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token }))).length).toBe(2);
  });

  it("refuses a key that another account, or this one, already registered", async () => {
    const { publicKey } = sshKey("ed25519");
    expect((await add(publicKey)).status).toBe(201);
    const again = await add(publicKey);
    expect(again.status).toBe(409);
    expect((await add(publicKey, await hub.createToken("bob"))).status).toBe(409);
  });

  it("rejects private keys of every format and stores nothing", async () => {
    const before = (await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token }))).length;
    const privateKeys = [
      sshKey("ed25519").privateKey,
      sshKey("rsa", 2048, "PEM").privateKey,
      sshKey("ecdsa", 256, "PKCS8").privateKey,
      gpgKey("private@example.com").privateKey,
    ];
    for (const privateKey of privateKeys) {
      const response = await add(privateKey);
      expect(response.status).toBe(400);
      expect((await readJson<ApiError>(response)).error).toMatch(/private key/);
      hub.secrets.add(
        privateKey.split("\n").find((line) => line.length > 40 && !line.startsWith("-----")) ?? privateKey,
      );
    }
    expect((await readJson<AccountKey[]>(await hub.request("/api/me/keys", { token }))).length).toBe(before);
  });

  it("rejects DSA, short RSA, truncated, malformed and oversized keys with a clear 400", async () => {
    const ed = sshKey("ed25519").publicKey.trim().split(" ");
    const cases: Array<[string, string, RegExp]> = [
      ["DSA", sshKey("dsa").publicKey, /DSA/],
      ["1024-bit RSA", sshKey("rsa", 1024).publicKey, /at least 2048 bits/],
      ["truncated", `${ed[0]} ${(ed[1] ?? "").slice(0, 40)}`, /truncated|malformed|damaged/],
      ["type mismatch", `ssh-rsa ${ed[1]}`, /does not match/],
      ["unknown type", `ssh-foo ${ed[1]}`, /not a supported SSH key type/],
      ["not base64", `ssh-ed25519 !!!notbase64`, /damaged/],
      ["two keys", `${ed.join(" ")}\n${ed.join(" ")}`, /one SSH public key/],
      [
        "broken PGP",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnonsense\n-----END PGP PUBLIC KEY BLOCK-----",
        /OpenPGP key could not be read/,
      ],
    ];
    for (const [name, key, message] of cases) {
      const response = await add(key);
      expect(response.status, name).toBe(400);
      expect((await readJson<ApiError>(response)).error, name).toMatch(message);
    }
    expect((await add("a".repeat(70_000))).status).toBe(400);
    expect(
      (await hub.request("/api/me/keys", { method: "POST", token, json: { key: "a".repeat(2_000_000) } }))
        .status,
    ).toBe(413);
  });

  it("accepts a GPG key only with the account's verified email", async () => {
    const { publicKey } = gpgKey("alice@example.com");
    const unverified = await add(publicKey);
    expect(unverified.status).toBe(400);
    expect((await readJson<ApiError>(unverified)).code).toBe("key_email_mismatch");
    expect((await hub.cli(["user", "verify-email", "alice"])).code).toBe(0);
    const other = gpgKey("someone-else@example.com").publicKey;
    expect((await add(other)).status).toBe(400);
    const accepted = await add(publicKey);
    expect(accepted.status).toBe(201);
    expect(await readJson<AccountKey>(accepted)).toMatchObject({ type: "gpg", title: "alice@example.com" });
  });

  it("needs account:keys on fine-grained tokens, with 403 in the shared error schema", async () => {
    const without = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    for (const [method, json] of [
      ["GET", undefined],
      ["POST", { key: sshKey("ed25519").publicKey }],
    ] as const) {
      const response = await hub.request("/api/me/keys", {
        method,
        token: without,
        ...(json ? { json } : {}),
      });
      expect(response.status).toBe(403);
      expect(Object.keys(await readJson<ApiError>(response)).sort()).toEqual(["code", "error"]);
    }
    const withScope = await hub.createToken("alice", ["--scopes", "account:keys"]);
    expect((await hub.request("/api/me/keys", { token: withScope })).status).toBe(200);
    expect((await hub.request("/api/me/keys")).status).toBe(401);
  });
});
