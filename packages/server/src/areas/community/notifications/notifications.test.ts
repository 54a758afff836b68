import type { ApiError, Notification, NotificationList, RepoWatch } from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../../db/database.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { FakeOpenIdProvider } from "../../../test-support/fake-openid-provider.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { ssoCallbackThrough } from "../../../test-support/hub-process.js";

const USERS = ["alice", "bob", "carol", "dave", "erin", "olga", "wendy", "rita"] as const;
type User = (typeof USERS)[number];

/** An NDJSON commit body with one file, as the Python client sends it. */
const ndjson = (summary: string, path: string, text: string, description = "") =>
  [
    { key: "header", value: { summary, description } },
    { key: "file", value: { path, content: Buffer.from(text).toString("base64"), encoding: "base64" } },
  ]
    .map((line) => JSON.stringify(line))
    .join("\n") + "\n";

describe.each(DIALECTS)("the notifications inbox on %s", (dialect) => {
  let hub: InProcessHub;
  let db: Db;
  const idp = new FakeOpenIdProvider();
  const t = {} as Record<User, string>;
  const passwords = {} as Record<User, string>;

  const call = (method: string, path: string, token: string | undefined, json?: unknown) =>
    hub.request(path, {
      method,
      ...(token === undefined ? {} : { token }),
      ...(json === undefined ? {} : { json }),
    });
  const ok = async <T>(response: Promise<Response>, status = 200): Promise<T> => {
    const answered = await response;
    expect(answered.status, await answered.clone().text()).toBe(status);
    return status === 204 ? (undefined as T) : readJson<T>(answered);
  };
  const errorOf = async (response: Promise<Response>, status: number) => {
    const answered = await response;
    expect(answered.status, await answered.clone().text()).toBe(status);
    return (await readJson<ApiError>(answered)).code;
  };
  const inbox = (token: string, query = "") =>
    ok<NotificationList>(call("GET", `/api/notifications${query}`, token));
  const unreadCount = async (token: string, query = "") =>
    (await ok<{ unreadCount: number }>(call("GET", `/api/notifications/unread-count${query}`, token)))
      .unreadCount;

  /** Opens a discussion (or pull request) as `who`; answers its number. */
  const open = async (who: User, repo: string, body: Record<string, unknown>) =>
    (await ok<{ num: number }>(call("POST", `/api/models/${repo}/discussions`, t[who], body))).num;
  const comment = (who: User, repo: string, num: number, text: string) =>
    ok(call("POST", `/api/models/${repo}/discussions/${num}/comment`, t[who], { comment: text }));
  const setWatch = (who: User, repo: string, mode: "watch" | "mute") =>
    ok<RepoWatch>(call("PUT", `/api/models/${repo}/watch`, t[who], { mode }));

  /**
   * Who holds notifications about one discussion, as each account's own inbox
   * lists them: `activity:reason`, sorted (activities a millisecond apart may
   * list in either order); accounts holding none are left out.
   */
  async function heard(repo: string, num: number): Promise<Partial<Record<User, string[]>>> {
    const heardBy: Partial<Record<User, string[]>> = {};
    for (const user of USERS) {
      const list = await inbox(t[user], `?repo=model/${repo}`);
      const entries = list.notifications
        .filter((n) => n.discussion.num === num)
        .map((n) => `${n.activity}:${n.reason}`)
        .sort();
      if (entries.length > 0) heardBy[user] = entries;
    }
    return heardBy;
  }

  beforeAll(async () => {
    await idp.start();
    idp.registerClient("hub-client", "idp-client-secret-notify-7Kq2");
    hub = await startInProcessHub({
      dialect,
      env: { HUB_RATE_LIMIT: "1000000", HUB_SSO_ALLOW_PRIVATE: "1" },
    });
    hub.secrets.add("idp-client-secret-notify-7Kq2");
    db = openDatabase(hub.config.database);
    for (const user of USERS) {
      passwords[user] = (await hub.createUser(user)).password;
      t[user] = await hub.createToken(user);
    }
    for (const [owner, repo, isPrivate] of [
      ["alice", "alice/open", false],
      ["alice", "alice/hidden", true],
      ["bob", "bob/other", false],
      ["bob", "bob/busy", false],
    ] as const)
      await ok(call("POST", "/api/repos", t[owner], { repo_id: repo, private: isPrivate }), 201);
    await ok(
      hub.request("/api/models/alice/open/commit/main", {
        method: "POST",
        token: t.alice,
        headers: { "content-type": "application/x-ndjson" },
        body: ndjson("Base", "README.md", "# open\n"),
      }),
    );
    await ok(call("POST", "/api/organizations", t.olga, { name: "acme" }), 201);
    await ok(call("POST", "/api/organizations/acme/members", t.olga, { user: "wendy", role: "write" }), 201);
    await ok(call("POST", "/api/organizations/acme/members", t.olga, { user: "rita", role: "read" }), 201);
    await ok(call("POST", "/api/repos", t.olga, { repo_id: "acme/private", private: true }), 201);
  });
  afterAll(async () => {
    await db?.destroy();
    await hub?.stop();
    await idp.stop();
  });

  it("tells the owner and the watchers of a new discussion, never the actor or those muting it", async () => {
    expect(await setWatch("carol", "alice/open", "watch")).toEqual({ mode: "watch" });
    expect(await setWatch("dave", "alice/open", "mute")).toEqual({ mode: "mute" });
    const num = await open("bob", "alice/open", { title: "Typo in the card" });
    expect(await heard("alice/open", num)).toEqual({
      alice: ["created:owner"],
      carol: ["created:watching"],
    });
    const [entry] = (await inbox(t.alice)).notifications;
    expect(entry).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/) as string,
      reason: "owner",
      activity: "created",
      read: false,
      createdAt: expect.any(String) as string,
      repo: { name: "alice/open", type: "model" },
      discussion: { num, title: "Typo in the card", status: "open", isPullRequest: false },
      actor: { name: "bob" },
      url: `${hub.url}/alice/open/discussions/${num}`,
    } satisfies Notification);
  });

  it("tells those taking part and the watchers of replies, renames and status changes; mentions reach even the muted", async () => {
    const num = await open("bob", "alice/open", { title: "Roadmap" });
    // A mention of oneself is no notification; dave mutes the repository, but a mention reaches him.
    await comment("alice", "alice/open", num, "Thanks! @dave and @erin, what do you think? (@alice)");
    expect(await heard("alice/open", num)).toEqual({
      alice: ["created:owner"],
      bob: ["comment:participating"],
      carol: ["comment:watching", "created:watching"],
      dave: ["comment:mention"],
      erin: ["comment:mention"],
    });
    await comment("erin", "alice/open", num, "Looks fine.");
    await comment("carol", "alice/open", num, "Agreed.");
    const renamed = await call("POST", `/api/models/alice/open/discussions/${num}/title`, t.bob, {
      title: "Roadmap 2025",
    });
    expect(renamed.status).toBe(200);
    // A status change's note mentions too.
    const closed = await call("POST", `/api/models/alice/open/discussions/${num}/status`, t.bob, {
      status: "closed",
      comment: "Done, thanks @dave.",
    });
    expect(closed.status).toBe(200);
    const after = await heard("alice/open", num);
    expect(after).toEqual({
      alice: [
        "comment:participating",
        "comment:participating",
        "created:owner",
        "status:participating",
        "title:participating",
      ],
      bob: ["comment:participating", "comment:participating", "comment:participating"],
      // Once carol writes in the thread she hears of it as a participant, not twice as a watcher.
      carol: [
        "comment:watching",
        "comment:watching",
        "created:watching",
        "status:participating",
        "title:participating",
      ],
      dave: ["comment:mention", "status:mention"],
      erin: ["comment:mention", "comment:participating", "status:participating", "title:participating"],
    });
    // Listings show the discussion as it is now.
    const latest = (await inbox(t.alice, "?repo=model/alice/open")).notifications.find(
      (n) => n.discussion.num === num,
    );
    expect(latest?.discussion).toEqual({
      num,
      title: "Roadmap 2025",
      status: "closed",
      isPullRequest: false,
    });
  });

  it("follows a pull request: opened, commits pushed to it, merged", async () => {
    const num = await open("bob", "alice/open", { title: "Add docs", pullRequest: true });
    const pushed = await hub.request(
      `/api/models/alice/open/commit/${encodeURIComponent(`refs/pr/${num}`)}`,
      {
        method: "POST",
        token: t.bob,
        headers: { "content-type": "application/x-ndjson" },
        body: ndjson("Add docs", "docs.md", "docs\n"),
      },
    );
    expect(pushed.status, await pushed.clone().text()).toBe(200);
    // Alice owns the repository but has not taken part yet: commits reach only the watchers.
    expect(await heard("alice/open", num)).toEqual({
      alice: ["created:owner"],
      carol: ["commit:watching", "created:watching"],
    });
    await ok(call("POST", `/api/models/alice/open/discussions/${num}/merge`, t.alice));
    expect(await heard("alice/open", num)).toEqual({
      alice: ["created:owner"],
      bob: ["merged:participating"],
      carol: ["commit:watching", "created:watching", "merged:watching"],
    });
    const merged = (await inbox(t.bob, "?kind=pull_request")).notifications[0];
    expect(merged?.discussion).toEqual({ num, title: "Add docs", status: "merged", isPullRequest: true });

    // A commit sent with create_pr=1 opens one too; its description's mentions count.
    const committed = await hub.request("/api/models/alice/open/commit/main?create_pr=1", {
      method: "POST",
      token: t.bob,
      headers: { "content-type": "application/x-ndjson" },
      body: ndjson("Fix docs", "docs.md", "fixed\n", "@erin please review"),
    });
    expect(committed.status, await committed.clone().text()).toBe(200);
    const { pullRequestUrl } = await readJson<{ pullRequestUrl: string }>(committed);
    const fromCommit = Number(/\/discussions\/(\d+)$/.exec(pullRequestUrl)?.[1]);
    expect(await heard("alice/open", fromCommit)).toEqual({
      alice: ["created:owner"],
      carol: ["created:watching"],
      erin: ["created:mention"],
    });
  });

  it("tells an organization's writers and admins of new threads on its private repositories, not its readers nor outsiders", async () => {
    // Rita reads (and so may open a thread); bob is no member: his mention gives him nothing.
    const first = await open("rita", "acme/private", { title: "Question", description: "@bob @wendy look" });
    expect(await heard("acme/private", first)).toEqual({
      olga: ["created:owner"],
      wendy: ["created:mention"],
    });
    const second = await open("wendy", "acme/private", { title: "Plan" });
    expect(await heard("acme/private", second)).toEqual({ olga: ["created:owner"] });
    // A reader mentioned in a private repository is told; a reader who watches hears of new threads.
    await comment("wendy", "acme/private", second, "@rita can you check? @bob too");
    expect(await heard("acme/private", second)).toEqual({
      olga: ["created:owner"],
      rita: ["comment:mention"],
    });
    await setWatch("rita", "acme/private", "watch");
    const third = await open("olga", "acme/private", { title: "Plan B" });
    expect(await heard("acme/private", third)).toEqual({
      wendy: ["created:owner"],
      rita: ["created:watching"],
    });
    // Bob could never read it: his own inbox holds nothing of it.
    const bobs = await db
      .selectFrom("notifications")
      .innerJoin("users", "users.id", "notifications.user_id")
      .innerJoin("discussions", "discussions.id", "notifications.discussion_id")
      .innerJoin("repositories", "repositories.id", "discussions.repository_id")
      .select("notifications.id")
      .where("users.handle", "=", "bob")
      .where("repositories.name", "=", "private")
      .execute();
    expect(bobs).toEqual([]);
  });

  it("stops telling a member who leaves, and no longer lists what came from repositories they cannot read", async () => {
    const num = await open("rita", "acme/private", { title: "Leaving soon" });
    await comment("wendy", "acme/private", num, "ok");
    const before = await inbox(t.rita, "?repo=model/acme/private");
    expect(before.count).toBeGreaterThan(0);
    const stale = before.notifications[0];
    const allBefore = await unreadCount(t.rita);
    expect(allBefore).toBe(before.unreadCount);

    await ok(call("DELETE", "/api/organizations/acme/members/rita", t.olga), 204);
    expect(await inbox(t.rita)).toMatchObject({ notifications: [], count: 0, unreadCount: 0 });
    expect(await unreadCount(t.rita)).toBe(0);
    expect(await errorOf(call("POST", `/api/notifications/${stale?.id ?? ""}/read`, t.rita), 404)).toBe(
      "notification_not_found",
    );
    await comment("wendy", "acme/private", num, "while you are away");

    // Back as a reader: the old ones show again; what happened while she was out never reached her.
    await ok(call("POST", "/api/organizations/acme/members", t.olga, { user: "rita", role: "read" }), 201);
    const back = await inbox(t.rita, "?repo=model/acme/private");
    expect(back.count).toBe(before.count);
    expect(back.notifications.map((n) => n.id)).toEqual(before.notifications.map((n) => n.id));
  });

  it("counts unread notifications and marks one, a selection or all of them read", async () => {
    await setWatch("erin", "bob/other", "watch");
    const other = await open("bob", "bob/other", { title: "Elsewhere" });
    await comment("bob", "bob/other", other, "more");
    const all = await inbox(t.erin);
    expect(all.count).toBeGreaterThan(3);
    expect(all.unreadCount).toBe(all.count);
    expect(await unreadCount(t.erin)).toBe(all.count);
    expect(await unreadCount(t.erin, "?repo=model/bob/other")).toBe(2);
    expect(await unreadCount(t.erin, "?repoType=model&repoName=bob/other")).toBe(2);

    const first = all.notifications.find((n) => n.repo.name === "alice/open");
    await ok(call("POST", `/api/notifications/${first?.id ?? ""}/read`, t.erin), 204);
    await ok(call("POST", `/api/notifications/${first?.id ?? ""}/read`, t.erin), 204);
    expect(await unreadCount(t.erin)).toBe(all.count - 1);
    const marked = (await inbox(t.erin)).notifications.find((n) => n.id === first?.id);
    expect(marked?.read).toBe(true);
    const unreadOnly = await inbox(t.erin, "?unread=1");
    expect(unreadOnly.count).toBe(all.count - 1);
    expect(unreadOnly.notifications.every((n) => !n.read)).toBe(true);

    // Someone else's notification and an unknown one are not found.
    expect(await errorOf(call("POST", `/api/notifications/${first?.id ?? ""}/read`, t.carol), 404)).toBe(
      "notification_not_found",
    );
    expect(await errorOf(call("POST", `/api/notifications/${"0".repeat(24)}/read`, t.erin), 404)).toBe(
      "notification_not_found",
    );

    expect(
      await ok(call("POST", "/api/notifications/read-all", t.erin, { repo: "model/bob/other" })),
    ).toEqual({
      marked: 2,
    });
    expect(await unreadCount(t.erin, "?repo=model/bob/other")).toBe(0);
    expect(await unreadCount(t.erin)).toBe(all.count - 3);

    // Carol watches alice/open: two pull requests among discussions.
    const carolAll = await inbox(t.carol, "?repo=model/alice/open");
    const pullRequests = carolAll.notifications.filter((n) => n.discussion.isPullRequest).length;
    expect(pullRequests).toBe(4);
    expect(await ok(call("POST", "/api/notifications/read-all", t.carol, { kind: "pull_request" }))).toEqual({
      marked: pullRequests,
    });
    const carolUnread = await inbox(t.carol, "?unread=1");
    expect(carolUnread.count).toBe(carolAll.count - pullRequests);
    expect(carolUnread.notifications.every((n) => !n.discussion.isPullRequest)).toBe(true);
    expect((await inbox(t.carol, "?kind=discussion")).count).toBe(carolAll.count - pullRequests);
    // Without a body, everything left.
    expect(await ok(call("POST", "/api/notifications/read-all", t.carol))).toEqual({
      marked: carolAll.count - pullRequests,
    });
    expect(await unreadCount(t.carol)).toBe(0);

    // Filters that name no repository the caller has notifications of select nothing; mixed or half filters are refused.
    expect((await inbox(t.erin, "?repo=model/nobody/nothing")).count).toBe(0);
    expect(
      await errorOf(call("GET", "/api/notifications?repo=model/bob/other&repoType=model", t.erin), 400),
    ).toBe("invalid_request");
    expect(await errorOf(call("GET", "/api/notifications?repoType=model", t.erin), 400)).toBe(
      "invalid_request",
    );
    expect((await call("GET", "/api/notifications?repo=bob/other", t.erin)).status).toBe(400);
    expect((await call("GET", "/api/notifications?kind=issue", t.erin)).status).toBe(400);
    expect(
      (await call("POST", "/api/notifications/read-all", t.erin, { repo: "model/bob/other", x: 1 })).status,
    ).toBe(400);
  });

  it("pages the inbox, newest first", async () => {
    await setWatch("dave", "bob/busy", "watch");
    const num = await open("bob", "bob/busy", { title: "Busy" });
    for (let i = 0; i < 54; i++) await comment("bob", "bob/busy", num, `comment ${i}`);
    const first = await inbox(t.dave, "?repo=model/bob/busy");
    const second = await inbox(t.dave, "?repo=model/bob/busy&p=1");
    expect(first).toMatchObject({ count: 55, unreadCount: 55, start: 0 });
    expect(first.notifications).toHaveLength(50);
    expect(second).toMatchObject({ count: 55, start: 50 });
    expect(second.notifications).toHaveLength(5);
    const all = [...first.notifications, ...second.notifications];
    expect(new Set(all.map((n) => n.id)).size).toBe(55);
    const times = all.map((n) => n.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(all.at(-1)?.activity).toBe("created");
    expect((await inbox(t.dave, "?repo=model/bob/busy&p=2")).notifications).toEqual([]);
  });

  it("watches, mutes and forgets a repository, for those who may read it", async () => {
    const path = "/api/models/bob/other/watch";
    expect(await ok(call("GET", path, t.wendy))).toEqual({ mode: null });
    expect(await ok(call("PUT", path, t.wendy, { mode: "watch" }))).toEqual({ mode: "watch" });
    expect(await ok(call("GET", path, t.wendy))).toEqual({ mode: "watch" });
    expect(await ok(call("PUT", path, t.wendy, { mode: "mute" }))).toEqual({ mode: "mute" });
    expect(await ok(call("GET", path, t.wendy))).toEqual({ mode: "mute" });
    await ok(call("DELETE", path, t.wendy), 204);
    expect(await ok(call("GET", path, t.wendy))).toEqual({ mode: null });
    expect((await call("PUT", path, t.wendy, { mode: "loud" })).status).toBe(400);
    // A private repository the caller cannot read does not exist for them; anonymous callers must sign in.
    expect(await errorOf(call("PUT", "/api/models/alice/hidden/watch", t.bob, { mode: "watch" }), 404)).toBe(
      "repo_not_found",
    );
    expect((await call("GET", path, undefined)).status).toBe(401);
    expect((await call("PUT", path, undefined, { mode: "watch" })).status).toBe(401);
  });

  it("lets read tokens read the inbox but not change it, and bounds fine-grained tokens to their repositories", async () => {
    const read = await hub.createToken("olga", ["--role", "read"]);
    const list = await inbox(read);
    expect(list.count).toBeGreaterThan(0);
    expect(await unreadCount(read)).toBe(list.unreadCount);
    expect(await errorOf(call("POST", "/api/notifications/read-all", read), 403)).toBe("insufficient_scope");
    expect(
      await errorOf(call("POST", `/api/notifications/${list.notifications[0]?.id ?? ""}/read`, read), 403),
    ).toBe("insufficient_scope");
    expect(await errorOf(call("PUT", "/api/models/bob/other/watch", read, { mode: "watch" }), 403)).toBe(
      "insufficient_scope",
    );
    expect(await ok(call("GET", "/api/models/bob/other/watch", read))).toEqual({ mode: null });

    // Olga hears of acme/private (as its admin) and, watching it, of bob/other.
    await setWatch("olga", "bob/other", "watch");
    const num = await open("bob", "bob/other", { title: "For olga" });
    const everything = await inbox(t.olga);
    const names = new Set(everything.notifications.map((n) => n.repo.name));
    expect(names).toEqual(new Set(["acme/private", "bob/other"]));
    const bounded = await hub.createToken("olga", [
      "--scopes",
      "repo:read,community:write",
      "--repos",
      "bob/other",
    ]);
    const seen = await inbox(bounded);
    expect(seen.notifications.map((n) => n.repo.name)).toEqual(["bob/other"]);
    expect(seen.notifications[0]?.discussion.num).toBe(num);
    expect(await unreadCount(bounded)).toBe(seen.unreadCount);
    // Marking all read with it leaves what it cannot see unread.
    expect(await ok(call("POST", "/api/notifications/read-all", bounded))).toEqual({ marked: 1 });
    expect(await unreadCount(t.olga)).toBe(everything.unreadCount - 1);

    const noRead = await hub.createToken("olga", ["--scopes", "community:write"]);
    expect(await errorOf(call("GET", "/api/notifications", noRead), 403)).toBe("insufficient_scope");
    const noWrite = await hub.createToken("olga", ["--scopes", "repo:read"]);
    expect(await errorOf(call("POST", "/api/notifications/read-all", noWrite), 403)).toBe(
      "insufficient_scope",
    );
    // The inbox spans the account: a token bounded to an organization does not reach it.
    const orgBound = await hub.createToken("olga", ["--scopes", "repo:read", "--org", "acme"]);
    expect(await errorOf(call("GET", "/api/notifications", orgBound), 403)).toBe("outside_token_bounds");
    expect((await call("GET", "/api/notifications", undefined)).status).toBe(401);
  });

  it("removes an account's notifications and watches with it, and keeps others' without naming it", async () => {
    const erin = await db
      .selectFrom("users")
      .select("id")
      .where("handle", "=", "erin")
      .executeTakeFirstOrThrow();
    const count = async (table: "notifications" | "repo_watches") =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as("n"))
            .where("user_id", "=", erin.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count("notifications")).toBeGreaterThan(0);
    expect(await count("repo_watches")).toBe(1);
    const fromErin = (await inbox(t.alice)).notifications.filter((n) => n.actor?.name === "erin");
    expect(fromErin.length).toBeGreaterThan(0);

    await hub.reauthenticate(t.erin, passwords.erin);
    await ok(call("DELETE", "/api/me/account", t.erin, { confirm: "erin" }));
    expect(await count("notifications")).toBe(0);
    expect(await count("repo_watches")).toBe(0);
    const after = (await inbox(t.alice)).notifications.filter((n) => fromErin.some((f) => f.id === n.id));
    expect(after).toHaveLength(fromErin.length);
    expect(after.every((n) => n.actor === undefined)).toBe(true);
  });

  it("tells members of an organization requiring single sign-on only while they hold a valid sign-in", async () => {
    const before = await inbox(t.wendy, "?repo=model/acme/private");
    expect(before.count).toBeGreaterThan(0);
    await ok(
      call("PUT", "/api/organizations/acme/sso", t.olga, {
        issuer: idp.issuer,
        clientId: "hub-client",
        clientSecret: "idp-client-secret-notify-7Kq2",
        emailDomain: "example.com",
        required: true,
      }),
    );
    // Olga signs in with the provider; wendy does not.
    idp.user = { subject: "olga-at-acme", email: "olga@example.com" };
    await ok(hub.request(await ssoCallbackThrough(hub, "acme", t.olga ?? ""), { token: t.olga }));
    for (const issued of idp.issuedTokens) hub.secrets.add(issued);

    const num = await open("olga", "acme/private", { title: "Behind SSO", description: "@wendy see this" });
    // Wendy, a writer mentioned, holds no sign-in: nothing reaches her, and what she had is not listed.
    expect(await inbox(t.wendy)).toMatchObject({ count: 0, unreadCount: 0 });
    const delivered = await db
      .selectFrom("notifications")
      .innerJoin("discussions", "discussions.id", "notifications.discussion_id")
      .innerJoin("repositories", "repositories.id", "discussions.repository_id")
      .select("notifications.id")
      .where("repositories.name", "=", "private")
      .where("discussions.num", "=", num)
      .execute();
    expect(delivered).toEqual([]);
    // Olga still reads hers.
    expect((await inbox(t.olga, "?repo=model/acme/private")).count).toBeGreaterThan(0);
  });

  it("documents its operations", async () => {
    const openapi = await ok<{
      paths: Record<string, Record<string, { operationId?: string; security?: unknown }>>;
    }>(call("GET", "/api/openapi.json", undefined));
    expect(openapi.paths["/api/notifications"]?.get?.security).toEqual([{ bearer: ["repo:read"] }]);
    expect(openapi.paths["/api/notifications/read-all"]?.post?.security).toEqual([
      { bearer: ["community:write"] },
    ]);
    expect(openapi.paths["/api/datasets/{owner}/{name}/watch"]?.put?.operationId).toBe(
      "notifications_watch_set_dataset",
    );
  });
});
