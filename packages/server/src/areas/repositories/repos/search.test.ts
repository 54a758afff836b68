import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPostgres } from "../../../db/dialect.js";
import { DIALECTS } from "../../../test-support/databases.js";
import { readJson, startInProcessHub, type InProcessHub } from "../../../test-support/hub-inprocess.js";
import { countCards, MAX_RANKED_CARDS } from "./search-sql.js";

/** How many seeded repositories' cards hold "zebra": more than search ranks by relevance. */
const SEEDED = MAX_RANKED_CARDS + 100;
const isPrivate = (i: number) => i % 50 === 0;
const isGated = (i: number) => i % 40 === 1;
/** The seeded repositories whose card also holds "okapi": few, so those are ranked by relevance. */
const hasOkapi = (i: number) => i % 100 === 7;
const seededName = (i: number) => `herd-${String(i).padStart(4, "0")}`;

/**
 * A listing's search at the size where the plan changes: a word in more
 * cards than MAX_RANKED_CARDS is walked in trending order and each card
 * tested, a rarer one ranked; names come first either way, and the private
 * and gated rules hold on both paths. The repositories are written straight
 * to the database (as bench/search.mjs seeds 100,000), with a few made
 * through the API to check that renames and deletions keep the indexes.
 */
describe.each(DIALECTS)("search over many cards, on %s", (dialect) => {
  let hub: InProcessHub;
  let alice: string;

  const ids = async (query: string, token?: string) => {
    const response = await hub.request(`/api/models?${query}`, token ? { token } : {});
    expect(response.status, `${query}: ${await response.clone().text()}`).toBe(200);
    return (await readJson<Array<{ id: string }>>(response)).map((entry) => entry.id);
  };

  /** Every page of a listing, following its Link header. */
  const allPages = async (query: string, token?: string) => {
    const found: string[] = [];
    let next: string | null = `${hub.url}/api/models?${query}`;
    while (next) {
      const response: Response = await hub.fetch(
        next,
        token ? { headers: { authorization: `Bearer ${token}` } } : {},
      );
      expect(response.status).toBe(200);
      found.push(...(await readJson<Array<{ id: string }>>(response)).map((entry) => entry.id));
      next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1] ?? null;
    }
    return found;
  };

  beforeAll(async () => {
    hub = await startInProcessHub({ dialect });
    await hub.createUser("alice");
    alice = await hub.createToken("alice");
    const owner = await hub.deps.account.findUser("alice");
    const db = hub.db;
    const now = new Date().toISOString();
    for (let start = 0; start < SEEDED; start += 100) {
      await db.transaction().execute(async (tx) => {
        for (let i = start; i < Math.min(SEEDED, start + 100); i++) {
          const id = randomUUID();
          await tx
            .insertInto("repositories")
            .values({
              id,
              owner_id: owner.id,
              owner_type: "user",
              type: "model",
              name: seededName(i),
              private: isPrivate(i) ? 1 : 0,
              default_branch: "main",
              created_at: now,
              updated_at: now,
              gated: isGated(i) ? "auto" : null,
              space_sdk: null,
              xet_enabled: 1,
            })
            .execute();
          await tx
            .insertInto("repo_stats")
            .values({
              repository_id: id,
              likes: SEEDED - i,
              downloads: 0,
              downloads_all_time: 0,
              trending_score: i,
            })
            .execute();
          const text = `A zebra of the herd, number ${i}.${hasOkapi(i) ? " It lives beside an okapi." : ""}`;
          if (isPostgres(tx)) {
            await sql`insert into repo_search (repository_id, document) values (${id}, to_tsvector('english', ${text}))`.execute(
              tx,
            );
          } else {
            await sql`insert into repo_search (rowid, card)
              select key, ${text} from repo_keys where repository_id = ${id}`.execute(tx);
          }
        }
      });
    }
    // Names that hold the word, with no card: they come before every card.
    for (const name of ["zebra", "zebra-crossing"]) {
      const response = await hub.request("/api/repos", {
        method: "POST",
        token: alice,
        json: { repo_id: `alice/${name}` },
      });
      expect(response.status, await response.clone().text()).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await hub?.stop();
  });

  /** The seeded repositories an anonymous caller finds by their card, most trending first. */
  const cardsByTrending = (holds: (i: number) => boolean = () => true) =>
    Array.from({ length: SEEDED }, (_, i) => SEEDED - 1 - i)
      .filter((i) => holds(i) && !isPrivate(i) && !isGated(i))
      .map((i) => `alice/${seededName(i)}`);

  it("counts the cards that hold a word no further than it is asked to", async () => {
    expect(await countCards(hub.db, ["zebra"], MAX_RANKED_CARDS + 1)).toBe(MAX_RANKED_CARDS + 1);
    expect(await countCards(hub.db, ["okapi"], MAX_RANKED_CARDS + 1)).toBe(11);
    expect(await countCards(hub.db, ["zebra", "okapi"], 5)).toBe(5);
  });

  it("lists names first, then a word many cards hold in trending order, page after page, leaving out private repositories and gated cards", async () => {
    const expected = ["alice/zebra", "alice/zebra-crossing", ...cardsByTrending()];
    expect(await ids("search=zebra&limit=25")).toEqual(expected.slice(0, 25));
    // The pages cross from the names' walk to the cards' and go on to the end.
    const pages = await allPages("search=zebra&limit=400");
    expect(pages).toEqual(expected);
    // The owner sees its private repositories and its gated cards too, each once.
    const own = await allPages("search=zebra&limit=500", alice);
    expect(new Set(own).size).toBe(SEEDED + 2);
    expect(own.length).toBe(SEEDED + 2);
  });

  it("walks a sort asked for, testing each card, with names among the cards in that order", async () => {
    // likes fall as the number rises; the two named repositories have none, so they come last.
    const byLikes = [...cardsByTrending()].reverse();
    expect(await ids("search=zebra&sort=likes&direction=-1&limit=30")).toEqual(byLikes.slice(0, 30));
    const fewest = await ids("search=zebra&sort=likes&direction=1&limit=3");
    // Equal counts come in the order of the repositories' ids.
    expect(fewest.slice(0, 2).sort()).toEqual(["alice/zebra", "alice/zebra-crossing"]);
    expect(fewest[2]).toBe(byLikes[byLikes.length - 1]);
  });

  it("ranks a word few cards hold by relevance, after the names", async () => {
    const okapis = await ids("search=okapi&limit=100");
    expect([...okapis].sort()).toEqual([...cardsByTrending(hasOkapi)].sort());
    expect(await ids("search=zebra okapi&limit=100")).toHaveLength(okapis.length);
    expect(await ids("search=herd-0107")).toEqual(["alice/herd-0107"]);
    // Part of a name, found through the names' index.
    expect((await ids("search=rd-010&limit=100")).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => 100 + i)
        .filter((i) => !isPrivate(i))
        .map((i) => `alice/${seededName(i)}`),
    );
    // The owner's handle with a slash: its repositories whose name starts with the rest.
    expect(await ids("search=alice/zebra-c")).toEqual(["alice/zebra-crossing"]);
  });

  it("lists a repository whose name and owner's handle both hold the text once", async () => {
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: "alice/relic" },
    });
    expect(created.status).toBe(201);
    // "lic" is in alice's handle, so every public repository of hers holds it, and in this one's name too.
    const found = await allPages("search=lic&limit=500");
    expect(found).toContain("alice/relic");
    expect(found).toHaveLength(new Set(found).size);
    const publicSeeded = Array.from({ length: SEEDED }, (_, i) => i).filter((i) => !isPrivate(i));
    expect(found).toHaveLength(publicSeeded.length + 3);
  });

  it("keeps the names' and cards' indexes when a repository is renamed or deleted", async () => {
    const created = await hub.request("/api/repos", {
      method: "POST",
      token: alice,
      json: { repo_id: "alice/savanna-one" },
    });
    expect(created.status).toBe(201);
    const readme = ["---", "license: mit", "---", "", "A gnu crossing the river."].join("\n");
    const commit = await hub.request("/api/models/alice/savanna-one/commit/main", {
      method: "POST",
      token: alice,
      headers: { "content-type": "application/x-ndjson" },
      body: [
        { key: "header", value: { summary: "Card" } },
        {
          key: "file",
          value: { path: "README.md", content: Buffer.from(readme).toString("base64"), encoding: "base64" },
        },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    });
    expect(commit.status, await commit.clone().text()).toBe(200);
    expect(await ids("search=gnu")).toEqual(["alice/savanna-one"]);

    const moved = await hub.request("/api/repos/move", {
      method: "POST",
      token: alice,
      json: { fromRepo: "alice/savanna-one", toRepo: "alice/grassland-two", type: "model" },
    });
    expect(moved.status, await moved.clone().text()).toBe(200);
    expect(await ids("search=savanna")).toEqual([]);
    expect(await ids("search=grassland")).toEqual(["alice/grassland-two"]);
    expect(await ids("search=gnu")).toEqual(["alice/grassland-two"]);

    const deleted = await hub.request("/api/repos/delete", {
      method: "DELETE",
      token: alice,
      json: { name: "grassland-two", type: "model" },
    });
    expect(deleted.ok, await deleted.clone().text()).toBe(true);
    expect(await ids("search=grassland")).toEqual([]);
    // The card went with it: no match is left to count.
    expect(await countCards(hub.db, ["gnu"], 10)).toBe(0);
  });
});
