// Discovery's listings at scale: 100,000 repositories with generated cards, tags, counts and parameters, seeded
// straight into the hub's database; then a filtered, sorted listing and full-text queries through a real hub,
// against the plain first page of the listing in the same run, on SQLite and on PostgreSQL.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { benchToken, hubd, isMain, load, printTable, run, startServer, wholeNumber } from "./lib.mjs";

const TASKS = [
  "text-generation",
  "text-classification",
  "token-classification",
  "translation",
  "summarization",
  "image-classification",
  "automatic-speech-recognition",
  "feature-extraction",
  "fill-mask",
  "object-detection",
];
const LIBRARIES = ["transformers", "diffusers", "peft", "sentence-transformers", "timm", "gguf"];
const LICENSES = ["apache-2.0", "mit", "cc-by-4.0", "llama3", "other"];
const LANGUAGES = ["en", "fr", "de", "zh", "es", "ja", "multilingual"];
const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "ta",
  "vo",
  "zi",
  "pe",
  "shu",
  "dra",
  "qua",
  "ben",
  "tor",
  "lin",
];

/** A small deterministic generator (mulberry32), so every run seeds the same hub. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Word `i` of a 3,000-word vocabulary of made-up words. */
const word = (i) => {
  let text = "";
  let n = i + 15;
  while (n > 0) {
    text += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return text;
};

/** The rows of `count` repositories owned by `owners`, with their metadata, tags, counts and cards. */
function* generate(count, owners) {
  const random = prng(1);
  const pick = (list) => list[Math.floor(random() * list.length)];
  // Zipf-like: low word numbers are common, as in real text.
  const zipfWord = () => word(Math.floor(Math.pow(random(), 3) * 3000));
  const start = Date.parse("2024-01-01T00:00:00Z");
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const created = new Date(start + Math.floor(random() * 600 * 86_400_000)).toISOString();
    const updated = new Date(Date.parse(created) + Math.floor(random() * 60 * 86_400_000)).toISOString();
    const task = pick(TASKS);
    const library = pick(LIBRARIES);
    const license = pick(LICENSES);
    const language = pick(LANGUAGES);
    const topics = [zipfWord(), zipfWord()];
    const card = Array.from({ length: 60 }, zipfWord).join(" ");
    yield {
      repository: {
        id,
        owner_id: pick(owners),
        owner_type: "user",
        type: "model",
        name: `${word(i % 3000)}-${i}`,
        private: random() < 0.1 ? 1 : 0,
        default_branch: "main",
        created_at: created,
        updated_at: updated,
        gated: random() < 0.05 ? "auto" : null,
        space_sdk: null,
        xet_enabled: 1,
      },
      stats: {
        repository_id: id,
        likes: Math.floor(Math.pow(random(), 4) * 5000),
        downloads: Math.floor(Math.pow(random(), 4) * 1_000_000),
        downloads_all_time: Math.floor(Math.pow(random(), 4) * 10_000_000),
        trending_score: Math.round(Math.pow(random(), 4) * 1000),
      },
      metadata: {
        repository_id: id,
        revision: "0".repeat(40),
        card_data: JSON.stringify({
          license,
          pipeline_tag: task,
          library_name: library,
          language: [language],
          tags: topics,
        }),
        card_error: null,
        pipeline_tag: task,
        library_name: library,
        license,
        config: null,
        safetensors: null,
        num_parameters: Math.floor(Math.pow(10, 6 + random() * 5)),
        total_size: Math.floor(random() * 50e9),
        gguf: library === "gguf" ? 1 : 0,
        onnx: 0,
        indexed_at: updated,
      },
      tags: [...new Set([task, library, language, `license:${license}`, ...topics])],
      card,
    };
  }
}

async function seedSqlite(file, count, owners) {
  const db = new Database(file);
  const statements = {};
  const statementFor = (table, row) =>
    (statements[table] ??= db.prepare(
      `insert into ${table} (${Object.keys(row).join(", ")}) values (${Object.keys(row)
        .map((c) => `@${c}`)
        .join(", ")})`,
    ));
  const tag = db.prepare("insert into repo_tags (repository_id, tag) values (?, ?)");
  // The card table is keyed by the key a trigger gave the repository (migration 0031).
  const search = db.prepare(
    "insert into repo_search (rowid, card) select key, ? from repo_keys where repository_id = ?",
  );
  const batch = db.transaction((rows) => {
    for (const row of rows) {
      statementFor("repositories", row.repository).run(row.repository);
      statementFor("repo_stats", row.stats).run(row.stats);
      statementFor("repo_metadata", row.metadata).run(row.metadata);
      for (const t of row.tags) tag.run(row.repository.id, t);
      search.run(row.card, row.repository.id);
    }
  });
  const rows = [];
  for (const row of generate(count, owners)) {
    rows.push(row);
    if (rows.length === 5000) batch(rows.splice(0));
  }
  batch(rows);
  db.exec("analyze");
  db.close();
}

async function seedPostgres(url, count, owners) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const insertMany = async (table, rows) => {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]);
    const values = [];
    const groups = rows.map((row, r) => {
      const placeholders = columns.map((column, c) => {
        values.push(row[column]);
        return `$${r * columns.length + c + 1}`;
      });
      return `(${placeholders.join(", ")})`;
    });
    await client.query(`insert into ${table} (${columns.join(", ")}) values ${groups.join(", ")}`, values);
  };
  const rows = [];
  const flush = async () => {
    const chunk = rows.splice(0);
    await client.query("begin");
    await insertMany(
      "repositories",
      chunk.map((row) => row.repository),
    );
    await insertMany(
      "repo_stats",
      chunk.map((row) => row.stats),
    );
    await insertMany(
      "repo_metadata",
      chunk.map((row) => row.metadata),
    );
    await insertMany(
      "repo_tags",
      chunk.flatMap((row) => row.tags.map((tag) => ({ repository_id: row.repository.id, tag }))),
    );
    const ids = chunk.map((row) => row.repository.id);
    await client.query(
      "insert into repo_search (repository_id, document) select id, to_tsvector('english', card) from unnest($1::text[], $2::text[]) as t(id, card)",
      [ids, chunk.map((row) => row.card)],
    );
    await client.query("commit");
  };
  for (const row of generate(count, owners)) {
    rows.push(row);
    if (rows.length === 500) await flush();
  }
  await flush();
  // A settled database, as a running hub's is: without this, autovacuum's first pass over the 100,000 new
  // rows of each table runs during the timed queries.
  await client.query("vacuum analyze");
  await client.end();
}

/** The account ids of the `count` owners the bench made. */
async function ownerIds(env, dialect, file, url) {
  if (dialect === "sqlite") {
    const db = new Database(file, { readonly: true });
    const ids = db
      .prepare("select id from users")
      .all()
      .map((row) => row.id);
    db.close();
    return ids;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query("select id from users");
  await client.end();
  return rows.map((row) => row.id);
}

async function benchDialect(dialect, { repositories, duration, connections }) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "hub-bench-search-"));
  let url;
  let admin;
  if (dialect === "postgres") {
    admin = process.env.HUB_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
    const name = `hub_bench_${randomBytes(5).toString("hex")}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`create database ${name}`);
    await client.end();
    const target = new URL(admin);
    target.pathname = `/${name}`;
    url = target.href;
  }
  const env = {
    PATH: process.env.PATH,
    HUB_DATA_DIR: dataDir,
    HUB_PORT: "0",
    HUB_RATE_LIMIT: "1000000000",
    HUB_TRENDING_INTERVAL_SECONDS: "0",
    ...(url ? { HUB_DATABASE_URL: url } : {}),
  };
  const token = await benchToken(env, "read");
  for (let i = 0; i < 9; i++) {
    await run(
      process.execPath,
      [hubd, "user", "create", `owner${i}`, "--email", `owner${i}@example.com`, "--password-stdin"],
      {
        env,
        input: "owner-password\n",
      },
    );
  }
  const file = path.join(dataDir, "hub.db");
  const owners = await ownerIds(env, dialect, file, url);
  const seedStart = performance.now();
  if (dialect === "sqlite") await seedSqlite(file, repositories, owners);
  else await seedPostgres(url, repositories, owners);
  const seedSeconds = (performance.now() - seedStart) / 1000;

  const hub = await startServer(hubd, ["serve", "--only", "hub"], { ...env, HUB_LOG_LEVEL: "info" });
  try {
    const everywhere = word(3);
    const frequent = word(40);
    const medium = word(300);
    const rare = word(2500);
    const scenarios = [
      ["first page of the listing (reference)", "/api/models?limit=20", {}],
      [
        "filtered and sorted: task, license, sort=downloads",
        "/api/models?filter=text-generation&license=apache-2.0&sort=downloads&limit=20",
        {},
      ],
      [
        "filtered and sorted, signed in",
        "/api/models?pipeline_tag=translation&library=transformers&sort=likes&limit=20",
        { authorization: `Bearer ${token}` },
      ],
      [`full-text: a word in about 1 card in 8 (${frequent})`, `/api/models?search=${frequent}&limit=20`, {}],
      [
        `full-text: two words (${frequent} ${medium})`,
        `/api/models?search=${frequent}+${medium}&limit=20`,
        {},
      ],
      [
        `full-text: a rare word, sorted by likes (${rare})`,
        `/api/models?search=${rare}&sort=likes&limit=20`,
        {},
      ],
      [
        `full-text: a word in nearly half the cards (${everywhere})`,
        `/api/models?search=${everywhere}&limit=20`,
        {},
      ],
    ];
    const results = [];
    for (const [name, pathname, headers] of scenarios) {
      const started = performance.now();
      const response = await fetch(`${hub.url}${pathname}`, { headers });
      if (process.env.BENCH_SEARCH_DIAG)
        console.error(name, response.status, (performance.now() - started).toFixed(1), "ms");
      const found = response.ok ? (await response.json()).length : `HTTP ${response.status}`;
      const result = await load(`${hub.url}${pathname}`, { headers, duration, connections, warmup: 1 });
      results.push([name, found, result]);
    }
    const reference = results[0][2];
    printTable(
      `Listings of ${repositories.toLocaleString("en")} seeded repositories on ${dialect === "sqlite" ? "SQLite" : "PostgreSQL"} (seeded in ${seedSeconds.toFixed(0)} s), ${connections} connections, ${duration}s each; target p99 under 50 ms`,
      ["query", "results", "requests/s", "p50 ms", "p99 ms", "p50 vs reference", "target"],
      results.map(([name, found, r]) => [
        name,
        found,
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        `${(r.p50 / reference.p50).toFixed(2)}x`,
        r.p99 < 50 ? "met" : "MISSED",
      ]),
    );
    return results;
  } finally {
    await hub.stop();
    if (process.env.BENCH_SEARCH_KEEP) console.error(`kept ${dataDir} ${url ?? ""}`);
    else rmSync(dataDir, { recursive: true, force: true });
    if (url && !process.env.BENCH_SEARCH_KEEP) {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`);
      await client.end();
    }
  }
}

export async function benchSearch({
  repositories = wholeNumber("--repositories", argValue("--repositories") ?? "100000"),
  duration = wholeNumber("--duration", argValue("--duration") ?? "5"),
  connections = wholeNumber("--connections", argValue("--connections") ?? "4"),
} = {}) {
  const dialects = (argValue("--dialects") ?? "sqlite,postgres").split(",");
  for (const dialect of dialects) await benchDialect(dialect, { repositories, duration, connections });
}

function argValue(name) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (isMain(import.meta.url)) await benchSearch();
