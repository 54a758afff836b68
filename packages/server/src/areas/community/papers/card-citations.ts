import type { Logger } from "pino";
import type { Db } from "../../../db/database.js";
import { ZERO_OID, type RepoFiles } from "../../../git/repo-files.js";
import { readmeAt, readmeTags } from "../../accounts/content-preferences/readme-tags.js";
import type { RepoEvents } from "../../../domain/repo-events.js";
import { readArxivId } from "./arxiv-id.js";
import { papersRepository } from "./papers.repository.js";

/** Citations kept per repository; a card citing more is indexed up to this many. */
const MAX_CITATIONS = 100;

/** arXiv abstract and PDF links: `arxiv.org/abs/<id>`, `arxiv.org/pdf/<id>[.pdf]`, old and new identifiers. */
const ARXIV_LINK =
  /\barxiv\.org\/(?:abs|pdf)\/((?:[A-Za-z-]+(?:\.[A-Za-z-]+)?\/)?\d{4}\.?\d{3,5}(?:v\d+)?)(?!\d)/gi;

/**
 * The papers a model or dataset card cites, as the Hugging Face Hub links
 * them: `arxiv:<id>` tags in the YAML front matter and arxiv.org links in the
 * text. Normalised, without versions, in order of first mention.
 */
export function cardCitations(readme: string, now: Date): string[] {
  const candidates = [
    ...readmeTags(readme)
      .filter((tag) => /^arxiv:/i.test(tag))
      .map((tag) => tag.slice("arxiv:".length)),
    ...Array.from(readme.matchAll(ARXIV_LINK), (match) => match[1] ?? ""),
  ];
  const ids = new Set<string>();
  for (const candidate of candidates) {
    const read = readArxivId(candidate, now);
    if (!("problem" in read)) ids.add(read.id);
  }
  return [...ids].slice(0, MAX_CITATIONS);
}

/**
 * Keeps each repository's citations in step with the README of its default
 * branch: when a push or an API commit moves that branch, the card is read at
 * the new commit and the citations it no longer makes are dropped. Hooked
 * beside webhooks on the repository events; a failure is logged, never turned
 * into a failed push.
 */
export function createCardCitations({
  db,
  clock,
  repoFiles,
  logger,
}: {
  db: Db;
  clock: () => Date;
  repoFiles: RepoFiles;
  logger: Logger;
}): RepoEvents {
  return {
    async publish(event) {
      if (event.scope !== "repo.content") return;
      const { repo } = event;
      const update = event.updatedRefs.find((u) => u.ref === `refs/heads/${repo.row.default_branch}`);
      if (!update) return;
      try {
        const readme =
          update.newSha === ZERO_OID ? null : await readmeAt(repoFiles, repo.row.id, update.newSha);
        const cited = readme === null ? [] : cardCitations(readme, clock());
        await db.transaction().execute(async (tx) => {
          const before = await papersRepository.citationsOf(tx, repo.row.id);
          await papersRepository.removeCitations(
            tx,
            repo.row.id,
            before.filter((id) => !cited.includes(id)),
          );
          await papersRepository.addCitations(
            tx,
            repo.row.id,
            cited.filter((id) => !before.includes(id)),
            clock().toISOString(),
          );
        });
      } catch (err) {
        logger.error({ err: (err as Error).message, repo: repo.fullName }, "paper citations not indexed");
      }
    },
  };
}
