import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type {
  ApiError,
  DailyPaper,
  Paper,
  PaperClaim,
  PaperClaimList,
  PaperSubmission,
  PaperSubmissionList,
  UserOverview,
} from "@hub/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS } from "../../../test-support/databases.js";
import { git, withToken } from "../../../test-support/git-client.js";
import { readJson, startHub, type TestHub } from "../../../test-support/hub-process.js";
import { readArxivId } from "./arxiv-id.js";
import { dailyPeriod } from "./daily-period.js";
import { cardCitations } from "./card-citations.js";

const NOW = new Date("2026-06-15T12:00:00Z");

describe("arXiv identifiers", () => {
  it("reads both forms, normalised, with the version apart", () => {
    const cases: Array<[string, string, number | null]> = [
      ["2106.09685", "2106.09685", null],
      ["2106.09685v2", "2106.09685", 2],
      ["arXiv:1706.03762v7", "1706.03762", 7],
      [" 0704.0001 ", "0704.0001", null],
      ["1412.6980v9", "1412.6980", 9],
      ["hep-th/9901001", "hep-th/9901001", null],
      ["math.GT/0309136v2", "math/0309136", 2],
      ["HEP-TH/9108001", "hep-th/9108001", null],
      ["cs.LG/0703001", "cs/0703001", null],
    ];
    for (const [input, id, version] of cases) expect(readArxivId(input, NOW), input).toEqual({ id, version });
  });

  it("says why anything else is not one", () => {
    const cases: Array<[string, RegExp]> = [
      ["2106.9685", /5 digits/],
      ["1412.69801", /4 digits/],
      ["0703.0001", /April 2007/],
      ["2113.00001", /not a month/],
      ["2106.00000", /start at 1/],
      ["2106.09685v0", /version/],
      ["2106.09685v1000", /version/],
      ["2607.00001", /still to come/],
      ["hep-xx/9901001", /not an arXiv archive/],
      ["hep-th/0704001", /August 1991 to March 2007/],
      ["hep-th/9107001", /August 1991 to March 2007/],
      ["hep-th/9913001", /not a month/],
      ["hep-th/9901000", /start at 001/],
      ["hep-th/990100", /neither/],
      ["https://arxiv.org/abs/2106.09685", /neither/],
      ["", /neither/],
    ];
    for (const [input, problem] of cases) {
      const read = readArxivId(input, NOW);
      expect("problem" in read ? read.problem : "", input).toMatch(problem);
    }
  });

  it("finds the papers a card cites, by arxiv: tags and arxiv.org links", () => {
    const readme = [
      "---",
      "license: mit",
      "tags:",
      "- text-generation",
      "- arxiv:2106.09685",
      "- arxiv:hep-th/9901001",
      "- arxiv:not-an-id",
      "---",
      "# LoRA",
      "See [the paper](https://arxiv.org/abs/2106.09685v2) and [attention](https://arxiv.org/pdf/1706.03762v5.pdf),",
      "also http://export.arxiv.org/abs/math.GT/0309136 and <https://www.arxiv.org/pdf/1412.6980>.",
      "Not these: https://arxiv.org/abs/2106.0968512, arxiv.org/list/cs.LG, notarxiv.org/abs/2001.00001.",
    ].join("\n");
    expect(cardCitations(readme, NOW)).toEqual([
      "2106.09685",
      "hep-th/9901001",
      "1706.03762",
      "math/0309136",
      "1412.6980",
    ]);
    expect(cardCitations("# no citations\n", NOW)).toEqual([]);
  });
});

describe("daily papers' periods", () => {
  it("reads a day, an ISO week and a month as half-open UTC ranges", () => {
    expect(dailyPeriod({ date: "2024-02-29" })).toEqual({
      from: "2024-02-29T00:00:00.000Z",
      to: "2024-03-01T00:00:00.000Z",
    });
    // ISO week 1 holds January 4th: 2026-W01 starts on Monday 2025-12-29.
    expect(dailyPeriod({ week: "2026-W01" })).toEqual({
      from: "2025-12-29T00:00:00.000Z",
      to: "2026-01-05T00:00:00.000Z",
    });
    expect(dailyPeriod({ week: "2020-W53" }).from).toBe("2020-12-28T00:00:00.000Z");
    expect(dailyPeriod({ month: "2025-12" })).toEqual({
      from: "2025-12-01T00:00:00.000Z",
      to: "2026-01-01T00:00:00.000Z",
    });
    expect(dailyPeriod({})).toEqual({});
    expect(() => dailyPeriod({ week: "2026-W00" })).toThrow(/ISO week/);
    expect(() => dailyPeriod({ month: "2025-13" })).toThrow(/calendar/);
  });
});

describe.each(DIALECTS)("papers: submissions, claims and citing repositories on %s", (dialect) => {
  let hub: TestHub;
  let work: string;
  let alice: string;
  let aliceRead: string;
  let aliceFineGrained: string;
  let alicePassword: string;
  let bob: string;
  let carol: string;

  const LORA = {
    title: "LoRA: Low-Rank Adaptation of Large Language Models",
    authors: ["Edward J. Hu", "Yelong Shen", "Phillip Wallis"],
    summary: "We propose Low-Rank Adaptation, or LoRA, which freezes the pre-trained model weights.",
    publishedAt: "2021-06-17",
  };
  const ATTENTION = {
    title: "Attention Is All You Need",
    authors: ["Ashish Vaswani", "Noam Shazeer"],
    publishedAt: "2017-06-12",
  };

  const submit = (json: unknown, token = alice) =>
    hub.request("/api/me/paper-submissions", { method: "POST", token, json });
  const claim = (json: unknown, token = bob) =>
    hub.request("/api/me/papers", { method: "POST", token, json });
  const paper = async (id: string, token?: string) => {
    const response = await hub.request(`/api/papers/${id}`, token ? { token } : {});
    expect(response.status, id).toBe(200);
    return readJson<Paper>(response);
  };
  const submissions = async (token = alice) =>
    (await readJson<PaperSubmissionList>(await hub.request("/api/me/paper-submissions", { token })))
      .submissions;
  const claims = async (token = bob) =>
    (await readJson<PaperClaimList>(await hub.request("/api/me/papers", { token }))).claims;
  const overview = async (name: string) =>
    readJson<UserOverview>(await hub.request(`/api/users/${name}/overview`));
  const created = async <T>(response: Response): Promise<T> => {
    expect(response.status, await response.clone().text()).toBe(201);
    return readJson<T>(response);
  };
  const refused = async (response: Response, status: number, code?: string) => {
    const body = await readJson<ApiError>(response);
    expect(response.status, JSON.stringify(body)).toBe(status);
    if (code) expect(body.code).toBe(code);
    return body;
  };

  beforeAll(async () => {
    hub = await startHub({ dialect });
    work = mkdtempSync(path.join(os.tmpdir(), "hub-papers-"));
    alicePassword = (await hub.createUser("alice")).password;
    await hub.createUser("bob");
    await hub.createUser("carol");
    alice = await hub.createToken("alice");
    aliceRead = await hub.createToken("alice", ["--role", "read"]);
    aliceFineGrained = await hub.createToken("alice", ["--scopes", "repo:read,repo:write"]);
    bob = await hub.createToken("bob");
    carol = await hub.createToken("carol");
  });
  afterAll(async () => {
    await hub?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("submits papers, lists them with their status, and answers a second submission with a 409 naming the first", async () => {
    const submission = await created<PaperSubmission>(
      await submit({ arxivId: "arXiv:2106.09685v2", ...LORA, fromANewerClient: true }),
    );
    expect(submission).toMatchObject({
      arxivId: "2106.09685",
      status: "unclaimed",
      claims: 0,
      mayEdit: true,
      paper: {
        id: "2106.09685",
        version: 2,
        title: LORA.title,
        authors: LORA.authors.map((name) => ({ name })),
        summary: LORA.summary,
        publishedAt: "2021-06-17T00:00:00.000Z",
        url: "https://arxiv.org/abs/2106.09685v2",
      },
    });
    const old = await created<PaperSubmission>(
      await submit({ arxivId: "math.GT/0309136", title: "  Old style  ", authors: ["A. Author"] }),
    );
    expect(old.paper).toMatchObject({ id: "math/0309136", version: null, title: "Old style", summary: "" });
    expect((await submissions(aliceRead)).map((s) => s.arxivId)).toEqual(["math/0309136", "2106.09685"]);

    const again = await refused(await submit({ arxivId: "2106.09685" }), 409, "paper_already_submitted");
    expect(again.error).toContain(submission.id);
    const other = await refused(await submit({ arxivId: "2106.09685v1", ...LORA }, bob), 409);
    expect(other.error).toMatch(/submitted by alice/);
    expect(other.field).toBe("arxivId");
    expect(await submissions(bob)).toEqual([]);

    const page = await paper("2106.09685");
    expect(page).toMatchObject({
      id: "2106.09685",
      title: LORA.title,
      submittedOnDailyBy: { user: "alice", fullname: "alice" },
      linkedModels: [],
      numTotalModels: 0,
    });
    expect(page.submittedOnDailyAt).toBe(submission.createdAt);
    expect(page.submittedOnDailyBy?.avatarUrl).toBe(`${hub.url}/api/users/alice/avatar`);
    // Old identifiers have a slash: either as written or encoded.
    expect((await paper("math/0309136")).title).toBe("Old style");
    expect((await paper("math%2F0309136")).title).toBe("Old style");
    expect((await paper("math.GT/0309136v3")).id).toBe("math/0309136");
    await refused(await hub.request("/api/papers/2301.00001"), 404, "not_found");
    const bad = await refused(await hub.request("/api/papers/not-an-id"), 400, "invalid_arxiv_id");
    expect(bad.field).toBe("arxivId");
  });

  it("finds papers by id, title or author at /api/papers/search, as list_papers asks", async () => {
    const search = async (query: string) => {
      const response = await hub.request(`/api/papers/search?${query}`);
      expect(response.status, query).toBe(200);
      return (await readJson<Array<{ id: string }>>(response)).map((paper) => paper.id);
    };
    expect(await search("q=low-rank")).toEqual(["2106.09685"]);
    expect(await search("q=YELONG")).toEqual(["2106.09685"]);
    expect(await search("q=2106.0968")).toEqual(["2106.09685"]);
    expect(await search("q=nothing%25like_this")).toEqual([]);
    const all = await search("");
    expect(all).toEqual(expect.arrayContaining(["2106.09685", "math/0309136"]));
    expect(await search("limit=1")).toHaveLength(1);
    expect((await hub.request("/api/papers/search?limit=0")).status).toBe(400);
  });

  it("lists submissions as daily papers, newest first, by period and submitter, as list_daily_papers asks", async () => {
    const daily = async (query = "") => {
      const response = await hub.request(`/api/daily_papers${query}`);
      expect(response.status, query).toBe(200);
      return readJson<DailyPaper[]>(response);
    };
    const all = await daily();
    expect(all.map((entry) => entry.paper.id)).toEqual(["math/0309136", "2106.09685"]);
    expect(all[1]).toMatchObject({
      title: LORA.title,
      submittedOnDailyBy: { user: "alice", avatarUrl: `${hub.url}/api/users/alice/avatar` },
      paper: { publishedAt: "2021-06-17T00:00:00.000Z", summary: LORA.summary },
    });
    const today = new Date().toISOString().slice(0, 10);
    expect((await daily(`?date=${today}`)).length).toBe(2);
    expect(await daily("?date=2020-01-01")).toEqual([]);
    expect((await daily(`?month=${today.slice(0, 7)}`)).length).toBe(2);
    expect((await daily("?submitter=alice")).length).toBe(2);
    expect(await daily("?submitter=bob")).toEqual([]);
    expect((await daily("?p=1&limit=1")).map((entry) => entry.paper.id)).toEqual(["2106.09685"]);
    expect((await daily("?sort=publishedAt")).length).toBe(2);
    for (const [query, status, code] of [
      ["?sort=trending", 400, "unsupported_parameter"],
      [`?date=${today}&month=${today.slice(0, 7)}`, 400, "invalid_value"],
      ["?date=2026-02-30", 400, "invalid_value"],
      ["?week=2021-W53", 400, "invalid_value"],
      ["?week=2026-1", 400, "validation_failed"],
    ] as const) {
      await refused(await hub.request(`/api/daily_papers${query}`), status, code);
    }
  });

  it("reads a paper as Markdown at /papers/{id}.md, as read_paper asks", async () => {
    const response = await hub.request("/papers/2106.09685.md");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    const text = await response.text();
    expect(text.startsWith(`# ${LORA.title}\n`)).toBe(true);
    expect(text).toContain("**Authors:** Edward J. Hu, Yelong Shen, Phillip Wallis");
    expect(text).toContain(`## Abstract\n\n${LORA.summary}`);
    expect((await hub.request("/papers/2301.00001.md")).status).toBe(404);
    expect((await hub.request("/papers/nonsense.md")).status).toBe(400);
  });

  it("withdraws only the caller's own submissions, and the paper nothing else refers to with them", async () => {
    const [mine] = (await submissions()).filter((s) => s.arxivId === "math/0309136");
    expect(mine).toBeDefined();
    const url = `/api/me/paper-submissions/${mine?.id ?? ""}`;
    await refused(await hub.request(url, { method: "DELETE", token: bob }), 404, "not_found");
    expect((await hub.request(url, { method: "DELETE", token: alice })).status).toBe(204);
    await refused(await hub.request(url, { method: "DELETE", token: alice }), 404);
    await refused(await hub.request("/api/papers/math/0309136"), 404);
    expect((await submissions()).map((s) => s.arxivId)).toEqual(["2106.09685"]);
    // Submitted again, it starts afresh from the new metadata.
    const again = await created<PaperSubmission>(
      await submit({ arxivId: "math/0309136", title: "Renewed", authors: ["B. Author"] }, bob),
    );
    expect(again.paper.title).toBe("Renewed");
    expect(
      (await hub.request(`/api/me/paper-submissions/${again.id}`, { method: "DELETE", token: bob })).status,
    ).toBe(204);
  });

  it("claims authorship as one of the authors, and the public profile and paper show visible claims only", async () => {
    const mine = await created<PaperClaim>(
      await claim({ arxivId: "2106.09685v1", authorName: " Yelong Shen " }),
    );
    expect(mine).toMatchObject({ arxivId: "2106.09685", authorName: "Yelong Shen", visible: true });
    expect(mine.paper.version).toBe(2);
    expect(await claims()).toEqual([mine]);

    const [submission] = await submissions();
    expect(submission).toMatchObject({ status: "claimed", claims: 1, mayEdit: false });

    const profile = await overview("bob");
    expect(profile.numPapers).toBe(1);
    expect(profile.papers.map((p) => p.id)).toEqual(["2106.09685"]);
    const shown = {
      name: "Yelong Shen",
      user: { user: "bob", fullname: "bob", avatarUrl: `${hub.url}/api/users/bob/avatar` },
    };
    expect(profile.papers[0]?.authors).toContainEqual(shown);
    expect((await paper("2106.09685")).authors).toEqual([
      { name: "Edward J. Hu" },
      shown,
      { name: "Phillip Wallis" },
    ]);

    const hide = await hub.request(`/api/me/papers/${mine.id}`, {
      method: "PATCH",
      token: bob,
      json: { visible: false, note: "ignored" },
    });
    expect(hide.status).toBe(200);
    expect((await readJson<PaperClaim>(hide)).visible).toBe(false);
    expect(await overview("bob")).toMatchObject({ numPapers: 0, papers: [] });
    expect((await paper("2106.09685")).authors).toEqual(LORA.authors.map((name) => ({ name })));
    expect((await claims()).map((c) => c.visible)).toEqual([false]);
    const show = await hub.request(`/api/me/papers/${mine.id}`, {
      method: "PATCH",
      token: bob,
      json: { visible: true },
    });
    expect((await readJson<PaperClaim>(show)).visible).toBe(true);
    expect((await overview("bob")).numPapers).toBe(1);

    const twice = await refused(
      await claim({ arxivId: "2106.09685", authorName: "Edward J. Hu" }),
      409,
      "paper_already_claimed",
    );
    expect(twice.error).toContain(mine.id);
    const taken = await refused(
      await claim({ arxivId: "2106.09685", authorName: "Yelong Shen" }, carol),
      409,
      "author_already_claimed",
    );
    expect(taken.error).not.toContain("bob");
    const stranger = await refused(
      await claim({ arxivId: "2106.09685", authorName: "Nobody" }, carol),
      400,
      "unknown_author",
    );
    expect(stranger.field).toBe("authorName");
    expect(stranger.error).toContain("Edward J. Hu");
  });

  it("records a paper from a claim's metadata, and removes it when the last claim goes", async () => {
    const missing = await refused(
      await claim({ arxivId: "2301.00001", authorName: "Carol C." }, carol),
      400,
      "paper_metadata_required",
    );
    expect(missing.field).toBe("title");
    await refused(
      await claim({ arxivId: "2301.00001", authorName: "Carol C.", title: "T" }, carol),
      400,
      "paper_metadata_required",
    );
    const own = await created<PaperClaim>(
      await claim(
        {
          arxivId: "2301.00001",
          authorName: "Carol C.",
          visible: false,
          title: "Hidden work",
          authors: ["Carol C.", "D. D."],
        },
        carol,
      ),
    );
    expect(own.visible).toBe(false);
    expect(await paper("2301.00001")).toMatchObject({
      title: "Hidden work",
      submittedOnDailyAt: null,
      submittedOnDailyBy: null,
      authors: [{ name: "Carol C." }, { name: "D. D." }],
    });
    expect((await overview("carol")).papers).toEqual([]);
    await refused(await hub.request(`/api/me/papers/${own.id}`, { method: "DELETE", token: bob }), 404);
    await refused(
      await hub.request(`/api/me/papers/${own.id}`, { method: "PATCH", token: bob, json: { visible: true } }),
      404,
    );
    expect((await hub.request(`/api/me/papers/${own.id}`, { method: "DELETE", token: carol })).status).toBe(
      204,
    );
    await refused(await hub.request("/api/papers/2301.00001"), 404);
    await refused(await hub.request(`/api/me/papers/${own.id}`, { method: "DELETE", token: carol }), 404);

    // A claim keeps the paper when its submission is withdrawn, and the other way round.
    const [submission] = await submissions();
    expect(
      (
        await hub.request(`/api/me/paper-submissions/${submission?.id ?? ""}`, {
          method: "DELETE",
          token: alice,
        })
      ).status,
    ).toBe(204);
    expect(await paper("2106.09685")).toMatchObject({ title: LORA.title, submittedOnDailyBy: null });
    const resubmitted = await created<PaperSubmission>(await submit({ arxivId: "2106.09685" }));
    expect(resubmitted).toMatchObject({ status: "claimed", mayEdit: false, paper: { title: LORA.title } });
  });

  it("lets the submitter edit the metadata until an author claims the paper, then the authors who claimed it", async () => {
    const submission = await created<PaperSubmission>(
      await submit(
        {
          arxivId: "2310.06825",
          title: "Mistral 7B",
          authors: ["Albert Q. Jiang", "Alexandre Sablayrolles"],
        },
        carol,
      ),
    );
    const edit = (json: unknown, token?: string, id = "2310.06825") =>
      hub.request(`/api/papers/${id}`, { method: "PATCH", json, ...(token ? { token } : {}) });

    const edited = await edit(
      { summary: "A 7-billion-parameter language model.", version: 1, publishedAt: "2023-10-10" },
      carol,
    );
    expect(edited.status).toBe(200);
    expect(await readJson<Paper>(edited)).toMatchObject({
      title: "Mistral 7B",
      summary: "A 7-billion-parameter language model.",
      version: 1,
      publishedAt: "2023-10-10T00:00:00.000Z",
      url: "https://arxiv.org/abs/2310.06825v1",
    });
    await refused(await edit({ title: "Mine now" }, bob), 403, "not_paper_editor");
    await refused(await edit({ title: "x" }), 401);
    await created<PaperClaim>(await claim({ arxivId: "2310.06825", authorName: "Albert Q. Jiang" }, bob));
    expect((await submissions(carol)).find((s) => s.id === submission.id)?.mayEdit).toBe(false);
    await refused(await edit({ title: "Still mine?" }, carol), 403, "not_paper_editor");
    const byAuthor = await edit({ title: "Mistral 7B (v2)", version: null }, bob);
    expect(await readJson<Paper>(byAuthor)).toMatchObject({ title: "Mistral 7B (v2)", version: null });
    const dropped = await refused(
      await edit({ authors: ["Alexandre Sablayrolles"] }, bob),
      400,
      "claimed_author_removed",
    );
    expect(dropped.field).toBe("authors");
    expect(
      (await readJson<Paper>(await edit({ authors: ["Albert Q. Jiang", "Arthur Mensch"] }, bob))).authors,
    ).toEqual([
      expect.objectContaining({ name: "Albert Q. Jiang", user: expect.objectContaining({ user: "bob" }) }),
      { name: "Arthur Mensch" },
    ]);
    await refused(await edit({ title: "x" }, bob, "2401.00001"), 404);

    // The scope rules of the edit: a write role token or a session of an editor.
    const bobRead = await hub.createToken("bob", ["--role", "read"]);
    const bobFine = await hub.createToken("bob", ["--scopes", "repo:read,repo:write"]);
    await refused(await edit({ title: "x" }, bobRead), 403, "insufficient_scope");
    await refused(await edit({ title: "x" }, bobFine), 403, "insufficient_scope");
  });

  it("links the repositories whose cards cite a paper when a push or commit moves the default branch", async () => {
    for (const [name, isPrivate] of [
      ["lora-adapter", false],
      ["secret-lora", true],
    ] as const) {
      const repo = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id: `alice/${name}`, private: isPrivate },
      });
      expect(repo.status).toBe(201);
    }
    const dir = path.join(work, "lora-adapter");
    const cloned = await git(
      ["clone", "-q", withToken(`${hub.gitUrl}/alice/lora-adapter`, alice), dir],
      work,
    );
    expect(cloned.code, cloned.stderr).toBe(0);
    const push = async (readme: string, branch = "main") => {
      writeFileSync(path.join(dir, "README.md"), readme);
      await git(["add", "-A"], dir);
      await git(["commit", "-q", "-m", "card"], dir);
      const pushed = await git(["push", "-q", "origin", `HEAD:${branch}`], dir);
      expect(pushed.code, pushed.stderr).toBe(0);
    };
    await push(
      "---\nlicense: mit\ntags:\n- lora\n- arxiv:2106.09685\n---\n# LoRA adapter\n\nBuilt on [Attention](https://arxiv.org/pdf/1706.03762v5.pdf).\n",
    );
    const linked = { _id: expect.any(String), id: "alice/lora-adapter", author: "alice", private: false };
    expect(await paper("2106.09685")).toMatchObject({ linkedModels: [linked], numTotalModels: 1 });
    // The citation was indexed before the paper was submitted; the page shows it once it is.
    await refused(await hub.request("/api/papers/1706.03762"), 404);
    await created<PaperSubmission>(await submit({ arxivId: "1706.03762", ...ATTENTION }, carol));
    expect((await paper("1706.03762")).linkedModels.map((r) => r.id)).toEqual(["alice/lora-adapter"]);

    // Pushing to another branch changes nothing; dropping the link from the default branch unlinks it.
    await push("# LoRA adapter, draft without citations\n", "draft");
    expect((await paper("1706.03762")).numTotalModels).toBe(1);
    await push("---\ntags:\n- arxiv:2106.09685\n---\n# LoRA adapter\n");
    expect(await paper("1706.03762")).toMatchObject({ linkedModels: [], numTotalModels: 0 });
    expect((await paper("2106.09685")).linkedModels.map((r) => r.id)).toEqual(["alice/lora-adapter"]);

    // A commit over the API links a private repository, which only those who may read it see.
    const readme = "# Secret\nSee https://arxiv.org/abs/2106.09685.\n";
    const commit = await hub.request("/api/models/alice/secret-lora/commit/main", {
      method: "POST",
      token: alice,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        { key: "header", value: { summary: "card" } },
        {
          key: "file",
          value: { path: "README.md", content: Buffer.from(readme).toString("base64"), encoding: "base64" },
        },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    });
    expect(commit.status).toBe(200);
    const asAlice = await paper("2106.09685", alice);
    expect(asAlice.numTotalModels).toBe(2);
    expect(asAlice.linkedModels.map((r) => [r.id, r.private])).toEqual(
      expect.arrayContaining([
        ["alice/secret-lora", true],
        ["alice/lora-adapter", false],
      ]),
    );
    for (const token of [bob, undefined]) {
      const seen = await paper("2106.09685", token);
      expect(seen.linkedModels.map((r) => r.id)).toEqual(["alice/lora-adapter"]);
      expect(seen.numTotalModels).toBe(1);
    }
    // Deleting the repository drops its citations.
    const deleted = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: alice,
      json: { name: "secret-lora", organization: "alice", type: "model" },
    });
    expect(deleted.status).toBe(204);
    expect((await paper("2106.09685", alice)).numTotalModels).toBe(1);
  });

  it("refuses every bad field with a 400 naming it", async () => {
    const long = (n: number) => "x".repeat(n);
    const submissionCases: Array<[unknown, string, string?]> = [
      [{}, "arxivId"],
      [{ arxivId: 2106.09685 }, "arxivId"],
      [{ arxivId: "" }, "arxivId"],
      [{ arxivId: long(65) }, "arxivId"],
      [{ arxivId: "2106.9685", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "0612.1234", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "2113.00001", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "2106.09685v0", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "9912.00001", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "hep-xx/9901001", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "hep-th/0801001", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "hep-th/99010011", ...LORA }, "arxivId", "invalid_arxiv_id"],
      [{ arxivId: "2402.00001", authors: ["A"] }, "title", "paper_metadata_required"],
      [{ arxivId: "2402.00001", title: "T" }, "authors", "paper_metadata_required"],
      [{ arxivId: "2402.00001", title: "", authors: ["A"] }, "title"],
      [{ arxivId: "2402.00001", title: "   ", authors: ["A"] }, "title", "invalid_title"],
      [{ arxivId: "2402.00001", title: long(301), authors: ["A"] }, "title"],
      [{ arxivId: "2402.00001", title: "a\nb", authors: ["A"] }, "title"],
      [{ arxivId: "2402.00001", title: 5, authors: ["A"] }, "title"],
      [{ arxivId: "2402.00001", title: "T", authors: [] }, "authors"],
      [{ arxivId: "2402.00001", title: "T", authors: "A" }, "authors"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A", "A"] }, "authors"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A", " A"] }, "authors.1", "invalid_author"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A", " "] }, "authors.1", "invalid_author"],
      [{ arxivId: "2402.00001", title: "T", authors: [long(201)] }, "authors.0"],
      [
        { arxivId: "2402.00001", title: "T", authors: Array.from({ length: 1001 }, (_, i) => `A${i}`) },
        "authors",
      ],
      [{ arxivId: "2402.00001", title: "T", authors: ["A"], summary: long(5001) }, "summary"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A"], summary: "a\u0007b" }, "summary"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A"], publishedAt: "2024-02-30" }, "publishedAt"],
      [{ arxivId: "2402.00001", title: "T", authors: ["A"], publishedAt: "yesterday" }, "publishedAt"],
      [
        { arxivId: "2402.00001", title: "T", authors: ["A"], publishedAt: "2024-01-31" },
        "publishedAt",
        "invalid_published_at",
      ],
      [
        { arxivId: "2402.00001", title: "T", authors: ["A"], publishedAt: "2999-01-01" },
        "publishedAt",
        "invalid_published_at",
      ],
    ];
    for (const [body, field, code] of submissionCases) {
      const error = await refused(await submit(body), 400);
      expect(error.field, JSON.stringify(body).slice(0, 200)).toBe(field);
      if (code) expect(error.code).toBe(code);
    }
    for (const body of [[], "x", null]) await refused(await submit(body), 400);

    const claimCases: Array<[unknown, string]> = [
      [{ authorName: "A" }, "arxivId"],
      [{ arxivId: "hep-th/9913001", authorName: "A" }, "arxivId"],
      [{ arxivId: "2106.09685" }, "authorName"],
      [{ arxivId: "2106.09685", authorName: "" }, "authorName"],
      [{ arxivId: "2106.09685", authorName: "   " }, "authorName"],
      [{ arxivId: "2106.09685", authorName: long(201) }, "authorName"],
      [{ arxivId: "2106.09685", authorName: "Edward J. Hu", visible: "yes" }, "visible"],
      [
        { arxivId: "2403.00001", authorName: "A", title: "T", authors: ["A"], publishedAt: "2024-02-01" },
        "publishedAt",
      ],
    ];
    for (const [body, field] of claimCases) {
      const error = await refused(await claim(body, carol), 400);
      expect(error.field, JSON.stringify(body)).toBe(field);
    }
    const [mine] = await claims();
    for (const [body, field] of [
      [{}, "visible"],
      [{ visible: "false" }, "visible"],
      [{ visible: null }, "visible"],
    ] as const) {
      const error = await refused(
        await hub.request(`/api/me/papers/${mine?.id ?? ""}`, { method: "PATCH", token: bob, json: body }),
        400,
      );
      expect(error.field).toBe(field);
    }
    for (const [body, field] of [
      [{ version: 0 }, "version"],
      [{ version: 1000 }, "version"],
      [{ version: "2" }, "version"],
      [{ title: long(301) }, "title"],
      [{ authors: [] }, "authors"],
      [{ publishedAt: "2021-05-31" }, "publishedAt"],
    ] as const) {
      const error = await refused(
        await hub.request("/api/papers/2106.09685", { method: "PATCH", token: bob, json: body }),
        400,
      );
      expect(error.field, JSON.stringify(body)).toBe(field);
    }
  });

  it("needs a session or a role token: read to view, write to change; fine-grained tokens are refused", async () => {
    const [submission] = await submissions();
    const [claimed] = await claims();
    const operations: Array<{ method: string; path: string; json?: unknown; write: boolean }> = [
      { method: "GET", path: "/api/me/papers", write: false },
      {
        method: "POST",
        path: "/api/me/papers",
        json: { arxivId: "2106.09685", authorName: "Phillip Wallis" },
        write: true,
      },
      { method: "PATCH", path: `/api/me/papers/${claimed?.id ?? ""}`, json: { visible: true }, write: true },
      { method: "DELETE", path: `/api/me/papers/${claimed?.id ?? ""}`, write: true },
      { method: "GET", path: "/api/me/paper-submissions", write: false },
      {
        method: "POST",
        path: "/api/me/paper-submissions",
        json: { arxivId: "2404.00001", title: "T", authors: ["A"] },
        write: true,
      },
      { method: "DELETE", path: `/api/me/paper-submissions/${submission?.id ?? ""}`, write: true },
    ];
    for (const { method, path: url, json, write } of operations) {
      const request = (token?: string) =>
        hub.request(url, { method, ...(json ? { json } : {}), ...(token ? { token } : {}) });
      await refused(await request(), 401, "unauthenticated");
      await refused(await request(aliceFineGrained), 403, "insufficient_scope");
      if (write) await refused(await request(aliceRead), 403, "insufficient_scope");
      else expect((await request(aliceRead)).status).toBe(200);
    }
    // A signed-in browser session is the person, with every right over its own account.
    const cookie = await hub.signIn("alice", alicePassword);
    const session = await hub.request("/api/me/paper-submissions", {
      method: "POST",
      headers: { cookie },
      json: { arxivId: "2404.00001", title: "By session", authors: ["Alice"] },
    });
    const made = await created<PaperSubmission>(session);
    expect((await hub.request("/api/me/paper-submissions", { headers: { cookie } })).status).toBe(200);
    expect(
      (await hub.request(`/api/me/paper-submissions/${made.id}`, { method: "DELETE", headers: { cookie } }))
        .status,
    ).toBe(204);
  });

  it("documents the operations with their request and response schemas", async () => {
    const doc = (await (await hub.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { operationId: string; requestBody?: unknown; responses: object }>
      >;
    };
    const operation = (url: string, method: string) => doc.paths[url]?.[method];
    const expected: Array<[string, string, string, string | null, string]> = [
      ["/api/me/papers", "get", "account_papers_list", null, "authorName"],
      ["/api/me/papers", "post", "account_papers_create", "authorName", "visible"],
      ["/api/me/papers/{claimId}", "patch", "account_papers_visibility_update", "visible", "authorName"],
      ["/api/me/papers/{claimId}", "delete", "account_papers_withdraw", null, "204"],
      ["/api/me/paper-submissions", "get", "account_paper_submissions_list", null, "mayEdit"],
      ["/api/me/paper-submissions", "post", "account_paper_submissions_create", "arxivId", "mayEdit"],
      [
        "/api/me/paper-submissions/{submissionId}",
        "delete",
        "account_paper_submissions_withdraw",
        null,
        "204",
      ],
      ["/api/papers/{arxivId}", "get", "papers_get", null, "linkedModels"],
      ["/api/papers/{arxivId}", "patch", "papers_update", "publishedAt", "numTotalDatasets"],
    ];
    for (const [url, method, id, requestField, responseText] of expected) {
      const op = operation(url, method);
      expect(op?.operationId, `${method} ${url}`).toBe(id);
      if (requestField) expect(JSON.stringify(op?.requestBody)).toContain(requestField);
      expect(JSON.stringify(op?.responses)).toContain(responseText);
    }
    expect(JSON.stringify(operation("/api/users/{name}/overview", "get")?.responses)).toContain("numPapers");
    expect(doc.paths["/api/papers/{archive}/{number}"]).toBeUndefined();
  });
});
