import { statSync } from "node:fs";
import path from "node:path";
import type {
  AccountKey,
  CreatedToken,
  MfaRecoveryCodes,
  RepoInfo,
  RepoSummary,
  TokenMetadata,
  TotpEnrollment,
  Whoami,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, totp } from "../../../server/src/auth/totp.js";
import { readJson, startHub, type TestHub } from "../../../server/src/test-support/hub-process.js";
import { runCli, tempHome } from "../test-support/run-cli.js";

const ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEYxkzX2vOTy5xXP3Cf3UxqV2Xsv0oMPUgpi6Hx8HV6w cli@test";

describe("the hub CLI against a running hub", () => {
  let hub: TestHub;
  let alice: { handle: string; password: string };
  let token: string;
  let home: string;
  const env = () => ({ SERVICE_ENDPOINT: hub.url, SERVICE_HOME: home });
  const hubCli = (args: string[], stdin = "", extra: Record<string, string> = {}) =>
    runCli(args, { ...env(), ...extra }, stdin);

  beforeAll(async () => {
    hub = await startHub();
    alice = await hub.createUser("alice");
    await hub.createUser("bob");
    token = await hub.createToken("alice", ["--role", "write"]);
    home = tempHome();
    const login = await hubCli(["login", "--token-stdin", "--name", "laptop"], `${token}\n`);
    expect(login.code, login.stderr).toBe(0);
  });
  afterAll(() => hub?.stop());

  it("logs in with a token, saving it with mode 0600 and never printing it", async () => {
    const file = path.join(home, "tokens.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const who = await hubCli(["whoami"]);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout.split("\n")[0]).toBe("alice");
    const json = JSON.parse((await hubCli(["whoami", "--json"])).stdout) as Whoami;
    expect(json.name).toBe("alice");
    const environment = await hubCli(["env"]);
    expect(environment.code).toBe(0);
    expect(environment.stdout).toContain('saved token "laptop"');
    expect(environment.stdout).not.toContain(token);
    expect(environment.stdout).not.toContain(token.slice(0, 10));
  });

  it("creates, lists and revokes tokens, asking for the password when the hub wants it", async () => {
    const created = await hubCli(
      ["token", "create", "ci", "--role", "read", "--expires-in", "7d"],
      `${alice.password}\n`,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain("password");
    const secret = created.stdout.trim().split("\n").pop() ?? "";
    hub.secrets.add(secret);
    expect(secret).toMatch(/^hf_/);

    const list = await hubCli(["token", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const tokens = JSON.parse(list.stdout) as TokenMetadata[];
    const ci = tokens.find((t) => t.name === "ci");
    expect(ci).toMatchObject({ role: "read", kind: "role" });
    expect(list.stdout).not.toContain(secret);

    const scoped = await hubCli([
      "token",
      "create",
      "deploy",
      "--scopes",
      "repo:read,inference:run",
      "--json",
    ]);
    expect(scoped.code, scoped.stderr).toBe(0);
    const deploy = JSON.parse(scoped.stdout) as CreatedToken;
    hub.secrets.add(deploy.token);
    expect(deploy).toMatchObject({ kind: "fine-grained", scopes: ["repo:read", "inference:run"] });

    expect((await hubCli(["token", "revoke", "ci"])).code).toBe(0);
    expect((await hubCli(["token", "revoke", deploy.token_id])).code).toBe(0);
    const after = JSON.parse((await hubCli(["token", "list", "--json"])).stdout) as TokenMetadata[];
    expect(after.map((t) => t.name)).not.toContain("ci");
    expect(after.map((t) => t.name)).not.toContain("deploy");
    const revoked = await runCli(["whoami"], {
      SERVICE_ENDPOINT: hub.url,
      SERVICE_TOKEN: secret,
      SERVICE_HOME: tempHome(),
    });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("asks again for the password when it was wrong, failing with one line", async () => {
    const fresh = await hub.createToken("alice");
    const other = tempHome();
    expect(
      (
        await runCli(
          ["login", "--token-stdin"],
          { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: other },
          `${fresh}\n`,
        )
      ).code,
    ).toBe(0);
    const wrong = await runCli(
      ["token", "list"],
      { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: other },
      "not-the-password\n",
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error: .*\(\w+\)$/m);
  });

  it("asks for the two-factor code too when the account has it on", async () => {
    const carla = await hub.createUser("carla");
    const carlaToken = await hub.createToken("carla");
    await hub.reauthenticate(carlaToken, carla.password);
    const enrollment = await readJson<TotpEnrollment>(
      await hub.request("/api/me/mfa/totp", { method: "POST", token: carlaToken }),
    );
    hub.secrets.add(enrollment.secret);
    const confirmed = await hub.request("/api/me/mfa/totp/confirm", {
      method: "POST",
      token: carlaToken,
      json: { otp: totp(base32Decode(enrollment.secret), Date.now()) },
    });
    expect(confirmed.status).toBe(200);
    const [recoveryCode = ""] = (await readJson<MfaRecoveryCodes>(confirmed)).recoveryCodes;
    hub.secrets.add(recoveryCode);

    const fresh = await hub.createToken("carla");
    const other = tempHome();
    const env = { SERVICE_ENDPOINT: hub.url, SERVICE_HOME: other };
    expect((await runCli(["login", "--token-stdin"], env, `${fresh}\n`)).code).toBe(0);
    const listed = await runCli(["token", "list", "--json"], env, `${carla.password}\n${recoveryCode}\n`);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as TokenMetadata[]).length).toBeGreaterThan(0);
  });

  it("saves several tokens and switches between them", async () => {
    const bobToken = await hub.createToken("bob");
    expect((await hubCli(["login", "--token-stdin", "--name", "bob"], `${bobToken}\n`)).code).toBe(0);
    expect((await hubCli(["whoami"])).stdout.split("\n")[0]).toBe("bob");
    const saved = JSON.parse((await hubCli(["token", "list", "--saved", "--json"])).stdout) as Array<{
      name: string;
      selected: boolean;
    }>;
    expect(saved).toEqual([
      expect.objectContaining({ name: "laptop", selected: false }),
      expect.objectContaining({ name: "bob", selected: true }),
    ]);
    expect((await hubCli(["token", "use", "laptop"])).code).toBe(0);
    expect((await hubCli(["whoami"])).stdout.split("\n")[0]).toBe("alice");
    expect((await hubCli(["logout", "bob"])).code).toBe(0);
    const missing = await hubCli(["token", "use", "bob"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("token_not_saved");
    expect(statSync(path.join(home, "tokens.json")).mode & 0o777).toBe(0o600);
  });

  it("creates, shows, lists and deletes repositories", async () => {
    const created = await hubCli(["repo", "create", "alice/cli-model", "--private", "--json"]);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout) as RepoSummary).toMatchObject({ id: "alice/cli-model", private: true });
    const again = await hubCli(["repo", "create", "alice/cli-model"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("(repo_exists)");
    expect((await hubCli(["repo", "create", "alice/cli-model", "--exist-ok"])).code).toBe(0);
    expect((await hubCli(["repo", "create", "alice/corpus", "--type", "dataset"])).code).toBe(0);

    const info = JSON.parse((await hubCli(["repo", "info", "alice/cli-model", "--json"])).stdout) as RepoInfo;
    expect(info.siblings.map((s) => s.rfilename)).toContain(".gitattributes");
    expect((await hubCli(["repo", "info", "datasets/alice/corpus"])).stdout).toContain("type: dataset");

    const list = await hubCli(["repo", "list", "--author", "alice"]);
    expect(list.stdout).toContain("alice/cli-model");
    const datasets = JSON.parse(
      (await hubCli(["repo", "list", "--type", "dataset", "--json"])).stdout,
    ) as Array<{ id: string }>;
    expect(datasets.map((d) => d.id)).toEqual(["alice/corpus"]);

    const refused = await hubCli(["repo", "delete", "alice/corpus", "--type", "dataset"]);
    expect(refused.code).toBe(2);
    expect((await hubCli(["repo", "delete", "alice/corpus", "--type", "dataset", "--yes"])).code).toBe(0);
    const gone = await hubCli(["repo", "info", "alice/corpus", "--type", "dataset"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("(repo_not_found)");
  });

  it("adds, lists and removes account keys", async () => {
    const added = await hubCli(["keys", "add", "-", "--title", "laptop", "--json"], `${ED25519}\n`);
    expect(added.code, added.stderr).toBe(0);
    const key = JSON.parse(added.stdout) as AccountKey;
    expect(key).toMatchObject({ type: "ssh", title: "laptop" });
    const list = await hubCli(["keys", "list"]);
    expect(list.stdout).toContain(key.fingerprint);
    expect((await hubCli(["keys", "remove", key.id])).code).toBe(0);
    expect(JSON.parse((await hubCli(["keys", "list", "--json"])).stdout)).toEqual([]);
  });

  it("exits 2 on usage errors and 1 on errors, with one line each", async () => {
    for (const args of [
      ["nope"],
      ["repo", "create"],
      ["whoami", "--bogus"],
      ["repo", "create", "not a repo"],
    ]) {
      const result = await hubCli(args);
      expect(result.code, args.join(" ")).toBe(2);
    }
    const error = await hubCli(["repo", "info", "alice/missing"]);
    expect(error.code).toBe(1);
    expect(error.stderr.trim()).toMatch(/^error: .+ \(repo_not_found\)$/);
  });
});
