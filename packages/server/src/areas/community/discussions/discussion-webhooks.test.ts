import type { CreatedWebhook } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { WebhookReceiver } from "../../../test-support/webhook-receiver.js";

/**
 * Discussion events reach webhook routes subscribed to the `discussion`
 * domain, shaped like the Hugging Face Hub's payloads (`discussion`,
 * `discussion.comment`), signed, and pull-request refs fire repository events
 * naming the ref.
 */
describe.each(DIALECTS)("discussion webhooks on %s", (dialect) => {
  let hub: InProcessHub;
  let ann: string;
  let bob: string;
  const receiver = new WebhookReceiver();
  const api = "/api/models/ann/hooked";

  const payloads = () => receiver.received.map((delivery) => delivery.payload);

  beforeAll(async () => {
    await receiver.start();
    hub = await startInProcessHub({ dialect, env: { HUB_WEBHOOKS_ALLOW_PRIVATE: "1" } });
    await hub.createUser("ann");
    await hub.createUser("bob");
    ann = await hub.createToken("ann");
    bob = await hub.createToken("bob");
    expect(
      (await hub.request("/api/repos", { method: "POST", token: ann, json: { repo_id: "ann/hooked" } }))
        .status,
    ).toBe(201);
    const seed = await hub.request(`${api}/commit/main`, {
      method: "POST",
      token: ann,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        JSON.stringify({ key: "header", value: { summary: "Seed" } }),
        JSON.stringify({
          key: "file",
          value: { path: "a.txt", content: Buffer.from("a").toString("base64"), encoding: "base64" },
        }),
      ].join("\n"),
    });
    expect(seed.status).toBe(200);
    const secrets: string[] = [];
    for (const domains of [["discussion"], ["repo.content"]]) {
      const response = await hub.request("/api/me/webhooks", {
        method: "POST",
        token: ann,
        json: { url: receiver.url, watched: [{ type: "model", name: "ann/hooked" }], domains },
      });
      expect(response.status).toBe(201);
      const created = await readJson<CreatedWebhook>(response);
      hub.secrets.add(created.secret);
      secrets.push(created.secret);
      receiver.verifyWith(...secrets);
    }
  });
  afterAll(async () => {
    await hub?.stop();
    await receiver.stop();
  });

  it("delivers discussion and comment events with the Hugging Face payload shape", async () => {
    const opened = await readJson<{ num: number }>(
      await hub.request(`${api}/discussions`, {
        method: "POST",
        token: bob,
        json: { title: "Hello", description: "Hi" },
      }),
    );
    const reply = await hub.request(`${api}/discussions/${opened.num}/comment`, {
      method: "POST",
      token: ann,
      json: { comment: "Welcome" },
    });
    const { newMessage } = await readJson<{ newMessage: { id: string } }>(reply);
    await hub.request(`${api}/discussions/${opened.num}/status`, {
      method: "POST",
      token: bob,
      json: { status: "closed" },
    });
    await receiver.waitFor(3);
    const events = payloads().map((p) => p.event);
    expect(events).toEqual([
      { action: "create", scope: "discussion" },
      { action: "create", scope: "discussion.comment" },
      { action: "update", scope: "discussion" },
    ]);
    expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
    const [created, commented, closed] = payloads();
    expect(created?.discussion).toMatchObject({
      num: opened.num,
      title: "Hello",
      status: "open",
      isPullRequest: false,
      url: { web: `${hub.url}/ann/hooked/discussions/${opened.num}` },
    });
    expect(commented?.comment).toMatchObject({ id: newMessage.id, content: "Welcome", hidden: false });
    expect(commented?.comment).toHaveProperty(
      "url.web",
      `${hub.url}/ann/hooked/discussions/${opened.num}#${newMessage.id}`,
    );
    expect(closed?.discussion).toMatchObject({ status: "closed" });
    expect(closed?.actor).toEqual({ name: "bob" });
  });

  it("fires repository events naming refs/pr/N, and a discussion event with the base branch for a pull request", async () => {
    const before = receiver.received.length;
    const opened = await readJson<{ num: number }>(
      await hub.request(`${api}/discussions`, {
        method: "POST",
        token: bob,
        json: { title: "PR", pullRequest: true },
      }),
    );
    await receiver.waitFor(before + 2);
    const fresh = payloads().slice(before);
    const content = fresh.find((p) => (p.event as { scope: string }).scope === "repo.content");
    expect(content?.updatedRefs).toEqual([expect.objectContaining({ ref: `refs/pr/${opened.num}` })]);
    const discussion = fresh.find((p) => (p.event as { scope: string }).scope === "discussion");
    expect(discussion?.discussion).toMatchObject({
      isPullRequest: true,
      status: "draft",
      changes: { base: "refs/heads/main" },
    });
  });
});
