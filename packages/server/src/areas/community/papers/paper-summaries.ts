import type { PaperAuthor, PaperSummary } from "@hub/api";
import type { DbOrTx } from "../../../db/database.js";
import type { PaperRow } from "../../../db/schema.js";
import { avatarUrlOf } from "../../accounts/profile/avatar-url.js";
import { arxivUrl } from "./arxiv-id.js";
import { papersRepository } from "./papers.repository.js";

/** A stored day (`YYYY-MM-DD`) as the date-time the Hugging Face clients parse. */
export function dayAsDateTime(day: string | null): string | null {
  return day === null ? null : `${day}T00:00:00.000Z`;
}

/**
 * Paper records in their API shape, in the order given: each author name an
 * account visibly claimed carries that account.
 */
export async function paperSummaries(
  db: DbOrTx,
  publicUrl: string,
  rows: PaperRow[],
): Promise<PaperSummary[]> {
  const shown = await papersRepository.visibleAuthors(
    db,
    rows.map((row) => row.arxiv_id),
  );
  return rows.map((row) => {
    const claimed = new Map(
      shown
        .filter((claim) => claim.arxiv_id === row.arxiv_id)
        .map((claim) => [
          claim.author_name,
          {
            user: claim.handle,
            fullname: claim.fullname,
            avatarUrl: avatarUrlOf(publicUrl, claim.handle, claim.avatar_sha256),
          },
        ]),
    );
    const authors = (JSON.parse(row.authors) as string[]).map((name): PaperAuthor => {
      const user = claimed.get(name);
      return user ? { name, user } : { name };
    });
    return {
      id: row.arxiv_id,
      version: row.version,
      title: row.title,
      authors,
      summary: row.summary,
      publishedAt: dayAsDateTime(row.published_at),
      url: arxivUrl({ id: row.arxiv_id, version: row.version }),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  });
}

/** The papers a user claimed and chose to show, newest claim first, for the public profile. */
export async function shownPapersOf(db: DbOrTx, publicUrl: string, userId: string): Promise<PaperSummary[]> {
  const claims = await papersRepository.claimsOf(db, userId, true);
  const rows = new Map(
    (
      await papersRepository.findMany(
        db,
        claims.map((claim) => claim.arxiv_id),
      )
    ).map((row) => [row.arxiv_id, row]),
  );
  const ordered = claims.flatMap((claim) => rows.get(claim.arxiv_id) ?? []);
  return paperSummaries(db, publicUrl, ordered);
}
