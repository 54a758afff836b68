import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AccountKey, CreatedToken, TokenList } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../test-support/databases.js";
import { FakeOpenIdProvider } from "../test-support/fake-openid-provider.js";
import { FakeProvider, writeProvidersFile } from "../test-support/fake-provider.js";
import { git, sshCommand, withToken } from "../test-support/git-client.js";
import { readJson, ssoCallbackThrough, startHub, type TestHub } from "../test-support/hub-process.js";

/**
 * Two hub processes of one deployment (one PostgreSQL and one Redis, or one
 * SQLite file), each caching credentials, memberships and billing settings.
 * Every change made through one process applies on the other's very next
 * request: the request right before it (on the other process) warmed that
 * process's cache.
 */
describe.each(DIALECTS)(
  "changes made through one hub process apply on the other's next request, on %s",
  (dialect) => {
    let writer: TestHub;
    let reader: TestHub;
    let work: string;
    const upstream = new FakeProvider("solo");
    const idp = new FakeOpenIdProvider();
    const tokens: Record<string, string> = {};
    const passwords: Record<string, string> = {};
    const lsRemoteHttps = (hub: TestHub, repo: string, token: string) =>
      git(["ls-remote", withToken(`${hub.gitUrl}/${repo}`, token)], work);
    const chat = (hub: TestHub, token: string) =>
      fetch(`${hub.routerUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "acme/chat-1", messages: [{ role: "user", content: "hi" }] }),
      });
    const whoami = (hub: TestHub, token: string) => hub.request("/api/whoami", { token });
    const repoInfo = (hub: TestHub, repo: string, token: string) =>
      hub.request(`/api/models/${repo}`, { token });

    beforeAll(async () => {
      await upstream.start();
      await idp.start();
      const providers = writeProvidersFile("changes", [
        {
          slug: "solo",
          baseUrl: upstream.url,
          apiKey: "sk-hub-key-solo",
          models: [
            { id: "acme/chat-1", providerModel: "m", task: "chat", pricing: { input: 1000, output: 1000 } },
          ],
        },
      ]);
      writer = await startHub({
        dialect,
        env: {
          HUB_REDIS_URL: "redis://127.0.0.1:6379",
          HUB_REDIS_PREFIX: `hub-test-${randomBytes(4).toString("hex")}:`,
          HUB_PROVIDERS: providers,
          HUB_SSO_ALLOW_PRIVATE: "1",
        },
      });
      writer.secrets.add("sk-hub-key-solo");
      // One public address for both, as behind a load balancer: an SSO sign-in's redirect URI names it.
      reader = await startHub({ sharing: writer, env: { HUB_PUBLIC_URL: writer.url } });
      work = mkdtempSync(path.join(os.tmpdir(), "hub-changes-"));
      for (const handle of ["ann", "bob"]) {
        passwords[handle] = (await writer.createUser(handle)).password;
        tokens[handle] = await writer.createToken(handle, ["--role", "write"]);
        await writer.reauthenticate(tokens[handle], passwords[handle]);
      }
      expect((await writer.cli(["org", "create", "acme", "--owner", "ann"])).code).toBe(0);
      expect((await writer.cli(["org", "add-member", "acme", "bob", "--role", "read"])).code).toBe(0);
      for (const handle of ["ann", "bob"])
        expect((await writer.cli(["credit", "add", handle, "1"])).code).toBe(0);
      const created = await writer.request("/api/repos", {
        method: "POST",
        token: tokens.ann,
        json: { repo_id: "acme/secret", private: true },
      });
      expect(created.status).toBe(201);
    }, 120_000);

    afterAll(async () => {
      await reader?.stop();
      await writer?.stop();
      await upstream.stop();
      await idp.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it("a revoked token stops on the API, git and the Router", async () => {
      const doomed = await writer.createToken("bob", ["--role", "write"]);
      expect((await whoami(reader, doomed)).status).toBe(200);
      expect((await lsRemoteHttps(reader, "acme/secret", doomed)).code).toBe(0);
      expect((await chat(reader, doomed)).status).toBe(200);
      // The reader's own writes (the token's first use, the ledger batch) retire its cache too: let them land,
      // then warm it once more, so only the writer's change can retire what it holds.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await whoami(reader, doomed)).status).toBe(200);

      const { tokens: listed } = await readJson<TokenList>(
        await writer.request("/api/me/tokens", { token: tokens.bob }),
      );
      const id = listed.find((t) => doomed.startsWith(t.token_prefix))?.token_id;
      const revoked = await writer.request(`/api/me/tokens/${id}`, { method: "DELETE", token: tokens.bob });
      expect(revoked.status).toBe(204);

      expect((await whoami(reader, doomed)).status).toBe(401);
      expect((await lsRemoteHttps(reader, "acme/secret", doomed)).code).not.toBe(0);
      expect((await chat(reader, doomed)).status).toBe(401);
    });

    it("a token that expires stops at its expiry, whatever was cached", async () => {
      const expiresAt = new Date(Date.now() + 2500).toISOString();
      const created = await writer.request("/api/me/tokens", {
        method: "POST",
        token: tokens.bob,
        json: { name: "short", role: "read", expires_at: expiresAt },
      });
      expect(created.status).toBe(201);
      const { token } = await readJson<CreatedToken>(created);
      writer.secrets.add(token);
      expect((await whoami(reader, token)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50));
      expect((await whoami(reader, token)).status).toBe(401);
    });

    it("an ended session stops", async () => {
      const cookie = await writer.signIn("bob", passwords.bob ?? "");
      expect((await reader.request("/api/whoami", { headers: { cookie } })).status).toBe(200);
      const out = await writer.request("/api/auth/logout", { method: "POST", headers: { cookie } });
      expect(out.status).toBeLessThan(300);
      expect((await reader.request("/api/whoami", { headers: { cookie } })).status).toBe(401);
    });

    it("a removed SSH key stops on the next connection", async () => {
      const keyFile = path.join(work, "bob_key");
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "bob", "-f", keyFile]);
      const added = await writer.request("/api/me/keys", {
        method: "POST",
        token: tokens.bob,
        json: { key: readFileSync(`${keyFile}.pub`, "utf8") },
      });
      expect(added.status).toBe(201);
      const { id } = await readJson<AccountKey>(added);
      const viaSsh = () =>
        git(["ls-remote", `${reader.sshUrl}/acme/secret.git`], work, {
          GIT_SSH_COMMAND: sshCommand(keyFile),
        });
      expect((await viaSsh()).code).toBe(0);
      expect(
        (await writer.request(`/api/me/keys/${id}`, { method: "DELETE", token: tokens.bob })).status,
      ).toBe(204);
      expect((await viaSsh()).code).not.toBe(0);
    });

    it("a role change and a removed membership apply on the API and git", async () => {
      const clone = path.join(work, "secret");
      expect(
        (await git(["clone", withToken(`${reader.gitUrl}/acme/secret`, tokens.bob ?? ""), clone], work)).code,
      ).toBe(0);
      await git(["commit", "--allow-empty", "-m", "from bob"], clone);
      expect((await git(["push", "origin", "HEAD:main"], clone)).code).not.toBe(0);

      const promoted = await writer.request("/api/organizations/acme/members/bob", {
        method: "PUT",
        token: tokens.ann,
        json: { role: "write" },
      });
      expect(promoted.status).toBe(204);
      const pushed = await git(["push", "origin", "HEAD:main"], clone);
      expect(pushed.code, pushed.stderr).toBe(0);

      expect((await repoInfo(reader, "acme/secret", tokens.bob ?? "")).status).toBe(200);
      const removed = await writer.request("/api/organizations/acme/members/bob", {
        method: "DELETE",
        token: tokens.ann,
      });
      expect(removed.status).toBe(204);
      expect((await repoInfo(reader, "acme/secret", tokens.bob ?? "")).status).toBe(404);
      expect((await lsRemoteHttps(reader, "acme/secret", tokens.bob ?? "")).code).not.toBe(0);

      expect((await writer.cli(["org", "add-member", "acme", "bob", "--role", "read"])).code).toBe(0);
    });

    it("a push through one process is what the other resolves next, and a branch it makes is found", async () => {
      const clone = path.join(work, "pushed");
      const token = tokens.ann ?? "";
      expect((await git(["clone", withToken(`${writer.gitUrl}/acme/secret`, token), clone], work)).code).toBe(
        0,
      );
      const resolve = (revision: string) =>
        reader.request(`/acme/secret/resolve/${revision}/notes.txt`, { token });
      for (const text of ["first", "second"]) {
        writeFileSync(path.join(clone, "notes.txt"), text);
        await git(["add", "notes.txt"], clone);
        await git(["commit", "-m", text], clone);
        // The reader has looked (and found nothing new) just before the push.
        await resolve("main");
        expect((await git(["push", "origin", "HEAD:main"], clone)).code).toBe(0);
        const response = await resolve("main");
        expect(response.status).toBe(200);
        expect(await response.text()).toBe(text);
      }
      expect((await resolve("topic")).status).toBe(404);
      expect((await git(["push", "origin", "HEAD:refs/heads/topic"], clone)).code).toBe(0);
      expect(await (await resolve("topic")).text()).toBe("second");
    });

    it("an organization that starts requiring SSO refuses its members at once, and a sign-in started on one process completes on the other", async () => {
      expect((await repoInfo(reader, "acme/secret", tokens.bob ?? "")).status).toBe(200);
      expect((await repoInfo(writer, "acme/secret", tokens.bob ?? "")).status).toBe(200);
      const required = await writer.request("/api/organizations/acme/sso", {
        method: "PUT",
        token: tokens.ann,
        json: { issuer: idp.issuer, clientId: "hub", clientSecret: "idp-secret-8Jd2kLq", required: true },
      });
      expect(required.status, await required.clone().text()).toBe(200);
      writer.secrets.add("idp-secret-8Jd2kLq");
      const refused = await repoInfo(reader, "acme/secret", tokens.bob ?? "");
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toMatch(/sso/);

      // The writer refuses him too, which it now remembers as it answers.
      expect((await repoInfo(writer, "acme/secret", tokens.bob ?? "")).status).toBe(403);
      // A sign-in started on one process (its state and PKCE verifier saved) completes on the other, once.
      idp.registerClient("hub", "idp-secret-8Jd2kLq");
      const callback = await ssoCallbackThrough(writer, "acme", tokens.bob ?? "");
      const signedIn = await reader.request(callback, { token: tokens.bob });
      expect(signedIn.status, await signedIn.clone().text()).toBe(200);
      for (const issued of idp.issuedTokens) writer.secrets.add(issued);
      // The writer, which refused bob a moment ago, lets him in on its next request; the state is spent there too.
      expect((await repoInfo(writer, "acme/secret", tokens.bob ?? "")).status).toBe(200);
      expect((await repoInfo(reader, "acme/secret", tokens.bob ?? "")).status).toBe(200);
      const replayed = await writer.request(callback, { token: tokens.bob });
      expect(replayed.status).toBe(400);
      expect(((await replayed.json()) as { code: string }).code).toBe("sso_state_invalid");

      expect(
        (await writer.request("/api/organizations/acme/sso", { method: "DELETE", token: tokens.ann })).status,
      ).toBe(204);
      expect((await repoInfo(reader, "acme/secret", tokens.bob ?? "")).status).toBe(200);
    });

    it("a saved provider key, and its removal, change what the Router sends upstream", async () => {
      const token = tokens.ann ?? "";
      const sentKey = () => upstream.requests.at(-1)?.authorization;
      expect((await chat(reader, token)).status).toBe(200);
      expect(sentKey()).toBe("Bearer sk-hub-key-solo");

      const saved = await writer.request("/api/me/inference/provider-keys/solo", {
        method: "PUT",
        token,
        json: { key: "sk-ann-own-key-1234" },
      });
      expect(saved.status).toBeLessThan(300);
      writer.secrets.add("sk-ann-own-key-1234");
      expect((await chat(reader, token)).status).toBe(200);
      expect(sentKey()).toBe("Bearer sk-ann-own-key-1234");

      const deleted = await writer.request("/api/me/inference/provider-keys/solo", {
        method: "DELETE",
        token,
      });
      expect(deleted.status).toBe(204);
      expect((await chat(reader, token)).status).toBe(200);
      expect(sentKey()).toBe("Bearer sk-hub-key-solo");
    });

    it("a monthly limit set on one process refuses routed calls on the other", async () => {
      const token = tokens.ann ?? "";
      expect((await chat(reader, token)).status).toBe(200);
      const limited = await writer.request("/api/me/inference/preferences", {
        method: "PUT",
        token,
        json: { monthly_hard_limit_usd: 0 },
      });
      expect(limited.status).toBe(200);
      const refused = await chat(reader, token);
      expect(refused.status).toBe(402);
    });
  },
);
