import type {
  InferencePreferences,
  OrgMember,
  OrgSummary,
  ProviderKeyList,
  WebhookDeliveryList,
  WebhookList,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeProvidersFile } from "../test-support/fake-provider.js";
import { readJson } from "../test-support/hub-process.js";
import { startInProcessHub, type InProcessHub } from "../test-support/hub-inprocess.js";
import { postForm, readPage } from "../test-support/web.js";
import { WebhookReceiver } from "../test-support/webhook-receiver.js";

/** Text as Svelte writes it into an element. */
const escaped = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&quot;");

/**
 * The organization pages rendered on the server: creating one, its page with its members, and its settings
 * (members, webhooks with their deliveries, inference, single sign-on) for its admins, all through the API.
 */
describe("the organization pages", () => {
  let hub: InProcessHub;
  const receiver = new WebhookReceiver();
  const cookies = new Map<string, string>();

  const page = (user: string | null, pathname: string) =>
    readPage(hub, pathname, { cookie: user ? cookies.get(user) : undefined, redirect: "manual" });
  const action = (user: string, pathname: string, fields: [string, string][] = []) =>
    postForm(hub, pathname, fields, { cookie: cookies.get(user) });
  const api = async <T>(user: string, pathname: string) =>
    readJson<T>(await hub.request(pathname, { headers: { cookie: cookies.get(user) ?? "" } }));
  const members = (org: string) => api<OrgMember[]>("alice", `/api/organizations/${org}/members`);

  beforeAll(async () => {
    await receiver.start();
    const providers = writeProvidersFile("web-orgs", [
      {
        slug: "local-vllm",
        baseUrl: "http://127.0.0.1:9/v1",
        apiKey: "sk-web-orgs-operator-key",
        models: [{ id: "acme/chat", providerModel: "m", task: "chat", pricing: { input: 1, output: 2 } }],
      },
    ]);
    hub = await startInProcessHub({
      env: { HUB_WEBHOOKS_ALLOW_PRIVATE: "1", HUB_PROVIDERS: providers, HUB_RATE_LIMIT: "1000000" },
    });
    hub.secrets.add("sk-web-orgs-operator-key");
    for (const name of ["alice", "bob", "carol", "dave"]) {
      const { password } = await hub.createUser(name);
      cookies.set(name, await hub.signIn(name, password));
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
  });

  it("creates an organization through the form and opens its page; a bad handle is refused", async () => {
    const refused = await action("alice", "/organizations/new", [["name", "Not A Handle"]]);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert"[^>]*>Name: use lowercase letters/);

    const created = await action("alice", "/organizations/new", [
      ["name", "acme"],
      ["fullname", "Acme Corp"],
    ]);
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/acme");
    const summary = await api<OrgSummary>("alice", "/api/organizations/acme");
    expect(summary).toMatchObject({ name: "acme", fullname: "Acme Corp", numMembers: 1 });
    expect(await members("acme")).toMatchObject([{ user: "alice", role: "admin" }]);

    const taken = await action("bob", "/organizations/new", [["name", "acme"]]);
    expect(taken.status).toBe(409);
    expect(await taken.text()).toMatch(
      /role="alert"[^>]*>The handle &quot;acme&quot; is taken|role="alert"[^>]*>The handle "acme" is taken/,
    );

    const anonymous = await page(null, "/organizations/new");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Forganizations%2Fnew");
  });

  it("lets an admin add a member with a role through the form, which the API then lists", async () => {
    const added = await action("alice", "/organizations/acme/settings/members?/add", [
      ["user", "bob"],
      ["role", "write"],
    ]);
    const text = await added.text();
    expect(added.status, text.slice(0, 300)).toBe(200);
    expect(text).toContain("Added bob as write.");
    expect(await members("acme")).toContainEqual(expect.objectContaining({ user: "bob", role: "write" }));

    const unknown = await action("alice", "/organizations/acme/settings/members?/add", [
      ["user", "nobody"],
      ["role", "read"],
    ]);
    expect(unknown.status).toBe(404);
    const refusal = await unknown.text();
    expect(refusal).toMatch(
      /role="alert"[^>]*>No user is called &quot;nobody&quot;|role="alert"[^>]*>No user is called "nobody"/,
    );
    expect(refusal).toContain('value="nobody"');
  });

  it("shows the organization's members, with roles, to members, and the settings link to admins only", async () => {
    const forAdmin = await (await page("alice", "/acme")).text();
    expect(forAdmin).toContain("Acme Corp");
    expect(forAdmin).toMatch(/<h2[^>]*>Members<\/h2>/);
    expect(forAdmin).toContain('src="/api/users/bob/avatar"');
    expect(forAdmin).toMatch(/href="\/bob"[^>]*>bob<\/a>\s*<span class="badge[^"]*">write</);
    expect(forAdmin).toContain('href="/organizations/acme/settings"');

    const forMember = await (await page("bob", "/acme")).text();
    expect(forMember).toContain('src="/api/users/alice/avatar"');
    expect(forMember).not.toContain('href="/organizations/acme/settings"');
    expect(forMember).toContain('href="/organizations/acme/leave"');

    for (const viewer of ["dave", null]) {
      const outside = await (await page(viewer, "/acme")).text();
      expect(outside).toContain("2 members");
      expect(outside).toContain("listed to the organization");
      expect(outside).not.toContain("/api/users/bob/avatar");
      expect(outside).not.toContain('href="/organizations/acme/settings"');
    }

    // A member's own page lists the organization.
    expect(await (await page(null, "/bob")).text()).toMatch(/href="\/acme"[^>]*>Acme Corp</);
  });

  it("shows a member who is not an admin the API's refusal instead of the settings, never its JSON", async () => {
    expect(
      (
        await action("alice", "/organizations/acme/settings/members?/add", [
          ["user", "carol"],
          ["role", "read"],
        ])
      ).status,
    ).toBe(200);
    for (const tab of ["members", "webhooks", "inference", "sso"]) {
      const refused = await page("carol", `/organizations/acme/settings/${tab}`);
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toMatch(/text\/html/);
      const text = await refused.text();
      expect(text).toMatch(/role="alert"[^>]*>Only the organization's admins manage its settings\./);
      expect(text).not.toContain('{"error"');
    }
    const posted = await action("carol", "/organizations/acme/settings/members?/add", [
      ["user", "dave"],
      ["role", "admin"],
    ]);
    expect(posted.status).toBe(403);
    expect((await members("acme")).map((m) => m.user)).not.toContain("dave");

    const anonymous = await page(null, "/organizations/acme/settings/members");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe(
      "/login?next=%2Forganizations%2Facme%2Fsettings%2Fmembers",
    );
    expect((await page("alice", "/organizations/nope/settings/members")).status).toBe(404);
  });

  it("changes a role, refuses to demote the last admin, removes a member, and lets a member leave", async () => {
    const changed = await action("alice", "/organizations/acme/settings/members?/role", [
      ["user", "bob"],
      ["role", "contributor"],
    ]);
    expect(changed.status).toBe(200);
    expect(await members("acme")).toContainEqual(
      expect.objectContaining({ user: "bob", role: "contributor" }),
    );

    const lastAdmin = await action("alice", "/organizations/acme/settings/members?/role", [
      ["user", "alice"],
      ["role", "read"],
    ]);
    expect(lastAdmin.status).toBe(409);
    expect(await lastAdmin.text()).toMatch(/role="alert"[^>]*>alice is the last admin of acme/);
    expect(await members("acme")).toContainEqual(expect.objectContaining({ user: "alice", role: "admin" }));

    const leaving = await action("alice", "/organizations/acme/settings/members?/leave");
    expect(leaving.status).toBe(409);
    expect(await leaving.text()).toContain("alice is the last admin of acme");

    const removed = await action("alice", "/organizations/acme/settings/members?/remove", [["user", "bob"]]);
    expect(removed.status).toBe(200);
    expect(await removed.text()).toContain("Removed bob from the organization.");
    expect((await members("acme")).map((m) => m.user)).not.toContain("bob");

    const left = await action("carol", "/organizations/acme/leave");
    expect(left.status).toBe(303);
    expect(left.headers.get("location")).toBe("/acme");
    expect((await members("acme")).map((m) => m.user)).toEqual(["alice"]);
  });

  it("creates a webhook through the form whose secret is shown once and never again, and redelivers", async () => {
    const unreadable = await action("alice", "/organizations/acme/settings/webhooks?/create", [
      ["url", receiver.url],
      ["watched", "organisation acme"],
    ]);
    expect(unreadable.status).toBe(400);
    const kept = await unreadable.text();
    expect(kept).toMatch(/role="alert"[^>]*>Watched: cannot read “organisation acme”/);
    expect(kept).toContain(escaped(receiver.url));

    const created = await action("alice", "/organizations/acme/settings/webhooks?/create", [
      ["url", receiver.url],
      ["watched", "org acme"],
      ["domains", "repo"],
      ["description", "CI"],
    ]);
    const text = await created.text();
    expect(created.status, text.slice(0, 300)).toBe(200);
    const secret = /data-testid="webhook-secret"[^>]*>([^<]+)</.exec(text)?.[1] ?? "";
    expect(secret).toMatch(/^whsec_/);
    hub.secrets.add(secret);
    receiver.verifyWith(secret);

    const { webhooks } = await api<WebhookList>("alice", "/api/organizations/acme/webhooks");
    expect(webhooks).toHaveLength(1);
    const [hook] = webhooks;
    expect(hook).toMatchObject({
      url: receiver.url,
      watched: [{ type: "org", name: "acme" }],
      domains: ["repo"],
      description: "CI",
      disabled: false,
    });
    const id = hook?.id ?? "";
    const list = await (await page("alice", "/organizations/acme/settings/webhooks")).text();
    expect(list).toContain(escaped(receiver.url));
    expect(list).not.toContain(secret);

    // An event: a repository created in the organization.
    const repo = await hub.request("/api/repos/create", {
      method: "POST",
      headers: { cookie: cookies.get("alice") ?? "" },
      json: { name: "bert", organization: "acme", type: "model" },
    });
    expect(repo.status).toBe(200);
    await receiver.waitFor(1);
    expect(receiver.received[0]?.verified).toBe(true);

    const detail = await (await page("alice", `/organizations/acme/settings/webhooks/${id}`)).text();
    expect(detail).not.toContain(secret);
    const { deliveries } = await api<WebhookDeliveryList>(
      "alice",
      `/api/organizations/acme/webhooks/${id}/deliveries`,
    );
    expect(deliveries).toHaveLength(1);
    const delivery = deliveries[0];
    expect(delivery).toMatchObject({
      status: "delivered",
      attempts: 1,
      event: { scope: "repo", action: "create" },
    });
    expect(detail).toContain(delivery?.id ?? "missing");
    expect(detail).toContain("Redeliver");

    const redelivered = await action("alice", `/organizations/acme/settings/webhooks/${id}?/redeliver`, [
      ["delivery", delivery?.id ?? ""],
    ]);
    expect(redelivered.status).toBe(200);
    expect(await redelivered.text()).toContain("will be sent again");
    await receiver.waitFor(2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id);
    expect(receiver.received[1]?.verified).toBe(true);
    for (let tries = 0; tries < 50; tries++) {
      const [after] = (
        await api<WebhookDeliveryList>("alice", `/api/organizations/acme/webhooks/${id}/deliveries`)
      ).deliveries;
      if (after?.attempts === 2 && after.status === "delivered") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const shown = await (
      await page("alice", `/organizations/acme/settings/webhooks/${id}?delivery=${delivery?.id ?? ""}`)
    ).text();
    const attempts = /class="attempts[^"]*">([\s\S]*?)<\/ol>/.exec(shown)?.[1] ?? "";
    expect(attempts.match(/<li/g)?.length).toBe(2);
    expect(attempts.match(/· success/g)?.length).toBe(2);
    expect(attempts).toContain("redelivered");

    const disabled = await action("alice", "/organizations/acme/settings/webhooks?/toggle", [
      ["id", id],
      ["enable", "false"],
    ]);
    expect(disabled.status).toBe(200);
    expect((await api<WebhookList>("alice", "/api/organizations/acme/webhooks")).webhooks[0]?.disabled).toBe(
      true,
    );
  });

  it("saves the inference preferences and a provider key that is never shown back", async () => {
    const saved = await action("alice", "/organizations/acme/settings/inference?/preferences", [
      ["default_policy", "cheapest"],
      ["provider_order", "local-vllm"],
      ["monthly_hard_limit_usd", "25"],
    ]);
    expect(saved.status).toBe(200);
    expect(await api<InferencePreferences>("alice", "/api/organizations/acme/inference/preferences")).toEqual(
      {
        provider_order: ["local-vllm"],
        disabled_providers: [],
        default_policy: "cheapest",
        monthly_hard_limit_usd: 25,
      },
    );

    const key = "sk-acme-own-provider-key-1234";
    hub.secrets.add(key);
    const stored = await action("alice", "/organizations/acme/settings/inference?/saveKey", [
      ["provider", "local-vllm"],
      ["key", key],
    ]);
    const text = await stored.text();
    expect(stored.status).toBe(200);
    expect(text).not.toContain(key);
    const { keys } = await api<ProviderKeyList>("alice", "/api/organizations/acme/inference/provider-keys");
    expect(keys).toMatchObject([{ provider: "local-vllm", key_hint: "…1234" }]);
    const shown = await (await page("alice", "/organizations/acme/settings/inference")).text();
    expect(shown).toContain("…1234");
    expect(shown).not.toContain(key);
    expect(shown).toContain('value="25"');
  });

  it("saves single sign-on with a client secret that is never shown back", async () => {
    const secret = "oidc-client-secret-for-acme";
    hub.secrets.add(secret);
    const saved = await action("alice", "/organizations/acme/settings/sso?/save", [
      ["issuer", "https://login.acme.example/realms/acme"],
      ["clientId", "hub"],
      ["clientSecret", secret],
      ["emailDomain", "acme.example"],
    ]);
    const text = await saved.text();
    expect(saved.status, text.slice(0, 300)).toBe(200);
    expect(text).not.toContain(secret);
    const sso = await api<{ configured: boolean; clientSecretSet: boolean; required: boolean }>(
      "alice",
      "/api/organizations/acme/sso",
    );
    expect(sso).toMatchObject({ configured: true, clientSecretSet: true, required: false });
    const shown = await (await page("alice", "/organizations/acme/settings/sso")).text();
    expect(shown).toContain('value="https://login.acme.example/realms/acme"');
    expect(shown).toContain("/api/organizations/acme/sso/callback");
    expect(shown).not.toContain(secret);

    const refused = await action("alice", "/organizations/acme/settings/sso?/save", [
      ["issuer", "ftp://login.acme.example"],
      ["clientId", "hub"],
    ]);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/role="alert"/);
  });

  it("once single sign-on is required, shows an admin without a sign-in the API's message, except on SSO", async () => {
    const required = await action("alice", "/organizations/acme/settings/sso?/save", [
      ["issuer", "https://login.acme.example/realms/acme"],
      ["clientId", "hub"],
      ["emailDomain", "acme.example"],
      ["required", "on"],
    ]);
    expect(required.status).toBe(200);
    expect((await api<{ required: boolean }>("alice", "/api/organizations/acme/sso")).required).toBe(true);

    const members = await page("alice", "/organizations/acme/settings/members");
    expect(members.status).toBe(403);
    const refusal = await members.text();
    expect(refusal).toMatch(/role="alert"[^>]*>The organization acme requires single sign-on/);
    expect(refusal).toContain('href="/organizations/acme/settings/sso"');
    expect((await page("alice", "/organizations/acme/settings/sso")).status).toBe(200);
    const orgPage = await (await page("alice", "/acme")).text();
    expect(orgPage).toContain("requires single sign-on");
    expect(orgPage).toContain('href="/organizations/acme/leave"');
  });
});
