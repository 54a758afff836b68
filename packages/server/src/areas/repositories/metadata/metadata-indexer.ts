import { buffer } from "node:stream/consumers";
import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import type { FoundRepo } from "../../../domain/repositories.js";
import type { RepoEvents } from "../../../domain/repo-events.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { ZERO_OID, type RepoFiles, type TreeEntry } from "../../../git/repo-files.js";
import { inferRelation, readCard } from "./card-metadata.js";
import { fileFacts, type ReadStart } from "./file-facts.js";
import { metadataRepository } from "./metadata.repository.js";

/** A README larger than this is indexed without its text and front matter. */
const MAX_CARD_BYTES = 1024 * 1024;

/**
 * Keeps what discovery knows of each repository in step with its default
 * branch: when a push or an API commit moves that branch, the card and the
 * files are read at the new commit and the metadata, tags, base models and
 * card text replaced in one transaction. Hooked on the repository events
 * beside webhooks; a failure is logged and never fails the push. Repositories
 * made before indexing existed are indexed by `backfill`, in the background.
 */
export function createMetadataIndexer({
  db,
  clock,
  repoFiles,
  objectStore,
  logger,
}: {
  db: Db;
  clock: () => Date;
  repoFiles: RepoFiles;
  objectStore: ObjectStore;
  logger: Logger;
}) {
  const emptyRow = (id: string, commit: string, problem: string | null) => ({
    repository_id: id,
    revision: commit,
    card_data: null,
    card_error: problem,
    pipeline_tag: null,
    library_name: null,
    license: null,
    config: null,
    safetensors: null,
    num_parameters: null,
    total_size: 0,
    gguf: 0,
    gguf_facts: null,
    onnx: 0,
    indexed_at: clock().toISOString(),
  });

  async function index(repo: FoundRepo, commit: string): Promise<void> {
    const readStart: ReadStart = async (entry: TreeEntry, length: number) => {
      if (entry.lfs) {
        if (length <= 0) return Buffer.alloc(0);
        return buffer(objectStore.read(entry.lfs.oid, { start: 0, end: Math.min(length, entry.size) - 1 }));
      }
      return (await repoFiles.readBlob(repo.row.id, entry.oid)).subarray(0, length);
    };
    const entries =
      commit === ZERO_OID ? [] : ((await repoFiles.listTree(repo.row.id, commit, "", true)) ?? []);
    const readme = entries.find((entry) => entry.type === "file" && entry.path === "README.md");
    const readmeText =
      readme && !readme.lfs && readme.size <= MAX_CARD_BYTES
        ? (await repoFiles.readBlob(repo.row.id, readme.oid)).toString("utf8")
        : null;
    const card = readCard(readmeText);
    const facts = await fileFacts(entries, readStart);
    const tags = new Set<string>(card.tags);
    if (card.pipelineTag) tags.add(card.pipelineTag);
    if (card.libraryName) tags.add(card.libraryName);
    for (const tag of facts.tags) tags.add(tag);
    for (const language of card.languages) tags.add(language);
    if (card.license) tags.add(`license:${card.license}`);
    for (const dataset of card.datasets) tags.add(`dataset:${dataset}`);
    for (const model of card.models) tags.add(`model:${model}`);
    const relation =
      card.baseModels.length === 0
        ? null
        : (card.baseModelRelation ?? inferRelation(card.baseModels, [...tags]));
    for (const base of card.baseModels) {
      tags.add(`base_model:${base}`);
      tags.add(`base_model:${relation}:${base}`);
    }
    await db.transaction().execute((tx) =>
      metadataRepository.replace(
        tx,
        {
          repository_id: repo.row.id,
          revision: commit,
          card_data: card.data ? JSON.stringify(card.data) : null,
          card_error: card.problems.length > 0 ? card.problems.join("\n") : null,
          pipeline_tag: card.pipelineTag,
          library_name: card.libraryName,
          license: card.license,
          config: facts.config ? JSON.stringify(facts.config) : null,
          safetensors: facts.safetensors ? JSON.stringify(facts.safetensors) : null,
          num_parameters: facts.safetensors?.total ?? facts.ggufFacts?.total ?? null,
          total_size: facts.totalSize,
          gguf: facts.gguf ? 1 : 0,
          gguf_facts: facts.ggufFacts ? JSON.stringify(facts.ggufFacts) : null,
          onnx: facts.onnx ? 1 : 0,
          indexed_at: clock().toISOString(),
        },
        [...tags].slice(0, 200),
        card.baseModels.map((base) => ({ base_model: base.toLowerCase(), relation: relation ?? "finetune" })),
        readmeText ?? "",
      ),
    );
  }

  /** Indexes a repository at a commit, logging rather than throwing; false when it could not. */
  async function indexSafely(repo: FoundRepo, commit: string): Promise<boolean> {
    try {
      await index(repo, commit);
      return true;
    } catch (err) {
      logger.error({ err: (err as Error).message, repo: repo.fullName }, "repository metadata not indexed");
      return false;
    }
  }

  /** The default branch's commit; null when the branch does not exist. */
  const headOf = (repo: FoundRepo) =>
    repoFiles.resolveObject(repo.row.id, `refs/heads/${repo.row.default_branch}`);

  const listener: RepoEvents = {
    async publish(event) {
      const { repo } = event;
      if (event.scope === "repo" && event.action === "create") {
        const head = await headOf(repo);
        if (head) await indexSafely(repo, head);
        return;
      }
      if (event.scope !== "repo.content") return;
      const update = event.updatedRefs.find((u) => u.ref === `refs/heads/${repo.row.default_branch}`);
      if (update) await indexSafely(repo, update.newSha);
    },
  };

  return {
    listener,
    /**
     * Indexes, one at a time, the repositories that have no metadata yet
     * (made before this hub indexed them); `findById` gives each one's record.
     * Returns how many it indexed.
     */
    async backfill(findById: (id: string) => Promise<FoundRepo | null>, batch = 50): Promise<number> {
      let done = 0;
      for (;;) {
        const rows = await metadataRepository.unindexed(db, batch);
        if (rows.length === 0) return done;
        for (const { id } of rows) {
          const repo = await findById(id);
          if (!repo) continue;
          await metadataRepository.ensureStats(db, id);
          // A repository without its default branch is indexed empty, so it is not asked again.
          const head = (await headOf(repo)) ?? ZERO_OID;
          if (!(await indexSafely(repo, head))) {
            // Nor is one that cannot be read: it is indexed empty, saying so, until its next push.
            await db
              .transaction()
              .execute((tx) =>
                metadataRepository.replace(
                  tx,
                  emptyRow(id, head, "The repository could not be read for indexing."),
                  [],
                  [],
                  "",
                ),
              );
          }
          done += 1;
        }
      }
    },
  };
}

export type MetadataIndexer = ReturnType<typeof createMetadataIndexer>;
