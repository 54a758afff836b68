import { randomUUID } from "node:crypto";
import type {
  CreatePaperClaim,
  CreatePaperSubmission,
  Paper,
  PaperClaim,
  PaperSubmission,
  PaperSummary,
  RepoListItem,
  RepoType,
  UpdatePaper,
} from "@hub/api";
import type { Resource } from "../../../auth/authorize.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db, DbOrTx } from "../../../db/database.js";
import type { PaperClaimRow, PaperRow, PaperSubmissionRow } from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import { avatarUrlOf } from "../../accounts/profile/avatar-url.js";
import { arxivMonth, readArxivId, type ArxivId } from "./arxiv-id.js";
import { paperSummaries } from "./paper-summaries.js";
import { papersRepository } from "./papers.repository.js";

/** Linked repositories listed per kind on a paper; the totals count them all. */
const LINKED_PER_KIND = 100;

interface Metadata {
  title?: string;
  authors?: string[];
  summary?: string;
  publishedAt?: string;
}

/**
 * Who may edit a paper's metadata: the accounts that claimed authorship, or
 * while none has, the account that submitted it.
 */
/** Text kept on one Markdown line: a title or name cannot start a new block. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function editorsOf(claims: PaperClaimRow[], submitterId: string | undefined): string[] {
  if (claims.length > 0) return claims.map((claim) => claim.user_id);
  return submitterId ? [submitterId] : [];
}

export interface PapersDeps {
  db: Db;
  clock: () => Date;
  repos: RepoLookup;
  publicUrl: string;
}

/**
 * Papers: records of arXiv papers (metadata from the account that first
 * submits or claims one, as the hub has no internet), submissions to the
 * papers page, authorship claims shown on public profiles, and the
 * repositories whose cards cite a paper.
 */
export function createPapersService({ db, clock, repos, publicUrl }: PapersDeps) {
  /** The identifier in `input`, or a 400 naming the field. */
  function arxivIdOf(input: string, field: string): ArxivId {
    const read = readArxivId(input, clock());
    if ("problem" in read)
      throw badRequest("invalid_arxiv_id", `"${input}" is not an arXiv identifier: ${read.problem}.`, field);
    return read;
  }

  function checkedTitle(title: string): string {
    const trimmed = title.trim();
    if (!trimmed) throw badRequest("invalid_title", "The title may not be blank.", "title");
    return trimmed;
  }

  function checkedAuthors(authors: string[]): string[] {
    const names = authors.map((name) => name.trim());
    names.forEach((name, index) => {
      if (!name) throw badRequest("invalid_author", "An author's name may not be blank.", `authors.${index}`);
      if (names.indexOf(name) !== index)
        throw badRequest(
          "invalid_author",
          `"${name}" is listed twice; list each author once.`,
          `authors.${index}`,
        );
    });
    return names;
  }

  /** A day no earlier than the identifier's month and not after today. */
  function checkedDay(arxivId: string, day: string): string {
    const month = arxivMonth(arxivId);
    if (day.slice(0, 7) < month)
      throw badRequest(
        "invalid_published_at",
        `arXiv ${arxivId} was numbered in ${month}, so it cannot have been published on ${day}.`,
        "publishedAt",
      );
    if (day > clock().toISOString().slice(0, 10))
      throw badRequest(
        "invalid_published_at",
        `${day} is still to come; send the day arXiv announced it.`,
        "publishedAt",
      );
    return day;
  }

  /** The metadata fields given, checked and trimmed. */
  function checkedMetadata(arxivId: string, body: Metadata): Metadata {
    return {
      ...(body.title === undefined ? {} : { title: checkedTitle(body.title) }),
      ...(body.authors === undefined ? {} : { authors: checkedAuthors(body.authors) }),
      ...(body.summary === undefined ? {} : { summary: body.summary.trim() }),
      ...(body.publishedAt === undefined ? {} : { publishedAt: checkedDay(arxivId, body.publishedAt) }),
    };
  }

  /** A record for a paper the hub does not know yet, from the metadata a request gives. */
  function newPaper(id: ArxivId, body: Metadata): PaperRow {
    const metadata = checkedMetadata(id.id, body);
    for (const field of ["title", "authors"] as const) {
      if (metadata[field] === undefined)
        throw badRequest(
          "paper_metadata_required",
          `The hub does not know arXiv ${id.id} yet; send its title and authors (and, if you like, summary and publishedAt).`,
          field,
        );
    }
    const now = clock().toISOString();
    return {
      arxiv_id: id.id,
      version: id.version,
      title: metadata.title ?? "",
      authors: JSON.stringify(metadata.authors ?? []),
      summary: metadata.summary ?? "",
      published_at: metadata.publishedAt ?? null,
      created_at: now,
      updated_at: now,
    };
  }

  async function requirePaper(tx: DbOrTx, arxivId: string): Promise<PaperRow> {
    const row = await papersRepository.find(tx, arxivId);
    if (!row)
      throw notFound(`arXiv ${arxivId} is not on this hub; submit it with POST /api/me/paper-submissions.`);
    return row;
  }

  /** The papers' summaries by identifier; a paper removed meanwhile is missing. */
  async function summariesOf(arxivIds: string[]): Promise<Map<string, PaperSummary>> {
    const rows = await papersRepository.findMany(db, arxivIds);
    return new Map((await paperSummaries(db, publicUrl, rows)).map((summary) => [summary.id, summary]));
  }

  async function presentSubmissions(rows: PaperSubmissionRow[]): Promise<PaperSubmission[]> {
    const ids = rows.map((row) => row.arxiv_id);
    const summaries = await summariesOf(ids);
    const claims = await papersRepository.claimsOn(db, ids);
    return rows.flatMap((row) => {
      const paper = summaries.get(row.arxiv_id);
      if (!paper) return [];
      const onPaper = claims.filter((claim) => claim.arxiv_id === row.arxiv_id);
      return {
        id: row.id,
        arxivId: row.arxiv_id,
        status: onPaper.length > 0 ? ("claimed" as const) : ("unclaimed" as const),
        claims: onPaper.length,
        mayEdit: editorsOf(onPaper, row.user_id).includes(row.user_id),
        createdAt: row.created_at,
        paper,
      };
    });
  }

  async function presentClaims(rows: PaperClaimRow[]): Promise<PaperClaim[]> {
    const summaries = await summariesOf(rows.map((row) => row.arxiv_id));
    return rows.flatMap((row) => {
      const paper = summaries.get(row.arxiv_id);
      if (!paper) return [];
      return {
        id: row.id,
        arxivId: row.arxiv_id,
        authorName: row.author_name,
        visible: row.visible === 1,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        paper,
      };
    });
  }

  /** The 409 for a paper that already has a submission. */
  async function submittedAlready(userId: string, arxivId: string) {
    const existing = await papersRepository.submissionOf(db, arxivId);
    if (!existing) return null;
    return existing.user_id === userId
      ? conflict(
          "paper_already_submitted",
          `You already submitted arXiv ${arxivId} (submission ${existing.id}).`,
          "arxivId",
        )
      : conflict(
          "paper_already_submitted",
          `arXiv ${arxivId} is already on the papers page, submitted by ${existing.handle} on ${existing.created_at.slice(0, 10)}; if you wrote it, claim authorship with POST /api/me/papers.`,
          "arxivId",
        );
  }

  /** The 409 for a claim on a paper the account, or someone for the same author, already claimed. */
  async function claimedAlready(userId: string, arxivId: string, authorName: string) {
    const existing = await papersRepository.conflictingClaim(db, userId, arxivId, authorName);
    if (!existing) return null;
    return existing.user_id === userId
      ? conflict(
          "paper_already_claimed",
          `You already claim arXiv ${arxivId} (claim ${existing.id}).`,
          "arxivId",
        )
      : conflict(
          "author_already_claimed",
          `Another account already claims to be "${authorName}" on arXiv ${arxivId}; pick the name that is yours.`,
          "authorName",
        );
  }

  /** The authors list, refusing a name it does not hold. */
  function requireAuthor(paper: PaperRow, authorName: string): void {
    const authors = JSON.parse(paper.authors) as string[];
    if (authors.includes(authorName)) return;
    const shown = authors.slice(0, 10).join(", ") + (authors.length > 10 ? ", …" : "");
    throw badRequest(
      "unknown_author",
      `"${authorName}" is not among the authors of arXiv ${paper.arxiv_id} (${shown}); send your name as the paper lists it.`,
      "authorName",
    );
  }

  /** The repositories citing the paper that the caller may read, by kind. */
  async function linked(principal: Principal | null, arxivId: string) {
    const byKind: Record<RepoType, RepoListItem[]> = { model: [], dataset: [], space: [], mcp: [] };
    for (const id of await papersRepository.citingRepositories(db, arxivId)) {
      const repo = await repos.findById(id);
      if (repo && (await repos.mayRead(principal, repo))) byKind[repo.type].push(repos.listItem(repo));
    }
    const first = (items: RepoListItem[]) => items.slice(0, LINKED_PER_KIND);
    return {
      linkedModels: first(byKind.model),
      numTotalModels: byKind.model.length,
      linkedDatasets: first(byKind.dataset),
      numTotalDatasets: byKind.dataset.length,
      linkedSpaces: first(byKind.space),
      numTotalSpaces: byKind.space.length,
      linkedMcps: first(byKind.mcp),
      numTotalMcps: byKind.mcp.length,
    };
  }

  return {
    /** The paper's page: its record, claimed authors, submitter and the citing repositories the caller may read. */
    async paper(principal: Principal | null, arxivIdInput: string): Promise<Paper> {
      const { id } = arxivIdOf(arxivIdInput, "arxivId");
      const row = await requirePaper(db, id);
      const [[summary], submission] = await Promise.all([
        paperSummaries(db, publicUrl, [row]),
        papersRepository.submissionOf(db, id),
      ]);
      if (!summary) throw notFound(`arXiv ${id} is not on this hub.`);
      return {
        ...summary,
        submittedOnDailyAt: submission?.created_at ?? null,
        submittedOnDailyBy: submission
          ? {
              user: submission.handle,
              fullname: submission.fullname,
              avatarUrl: avatarUrlOf(publicUrl, submission.handle, submission.avatar_sha256),
            }
          : null,
        ...(await linked(principal, id)),
      };
    },

    /** The paper as a Markdown page, as `huggingface_hub`'s read_paper reads it. */
    async markdown(arxivIdInput: string): Promise<string> {
      const { id } = arxivIdOf(arxivIdInput, "arxivId");
      const [summary] = await paperSummaries(db, publicUrl, [await requirePaper(db, id)]);
      if (!summary) throw notFound(`arXiv ${id} is not on this hub.`);
      const authors = summary.authors.map((author) =>
        author.user
          ? `${author.name} ([@${author.user.user}](${publicUrl}/${author.user.user}))`
          : author.name,
      );
      return [
        `# ${oneLine(summary.title)}`,
        "",
        `**Authors:** ${authors.map(oneLine).join(", ")}`,
        "",
        `**arXiv:** [${summary.id}](${summary.url})${summary.publishedAt ? ` · published ${summary.publishedAt.slice(0, 10)}` : ""}`,
        "",
        "## Abstract",
        "",
        summary.summary.trim(),
        "",
      ].join("\n");
    },

    /** Submissions to the papers page, newest first, in a period (a day, an ISO week or a month) and by a submitter. */
    async daily(filter: { from?: string; to?: string; submitter?: string; offset: number; limit: number }) {
      const rows = await papersRepository.dailySubmissions(db, filter);
      const summaries = await paperSummaries(db, publicUrl, rows);
      return rows.map((row, index) => {
        const paper = summaries[index];
        if (!paper) throw new Error(`No summary for ${row.arxiv_id}.`);
        return {
          paper,
          title: paper.title,
          submittedOnDailyAt: row.submitted_at,
          submittedOnDailyBy: {
            user: row.handle,
            fullname: row.submitter_fullname,
            avatarUrl: avatarUrlOf(publicUrl, row.handle, row.avatar_sha256),
          },
        };
      });
    },

    /** Papers on this hub whose id, title or authors hold the text, as `huggingface_hub`'s list_papers reads them. */
    async search(text: string, limit: number): Promise<PaperSummary[]> {
      return paperSummaries(db, publicUrl, await papersRepository.search(db, text, limit));
    },

    /** The paper as the authorization rules see it: who may edit it. */
    async editResource(arxivIdInput: string): Promise<Resource> {
      const { id } = arxivIdOf(arxivIdInput, "arxivId");
      await requirePaper(db, id);
      const [claims, submission] = await Promise.all([
        papersRepository.claimsOn(db, [id]),
        papersRepository.submissionOf(db, id),
      ]);
      return { type: "paper", arxivId: id, editors: editorsOf(claims, submission?.user_id) };
    },

    /** Changes the metadata fields given; author names someone claimed must stay. The caller was authorized as an editor. */
    async update(principal: Principal, arxivIdInput: string, body: UpdatePaper): Promise<Paper> {
      const { id } = arxivIdOf(arxivIdInput, "arxivId");
      const metadata = checkedMetadata(id, body);
      await db.transaction().execute(async (tx) => {
        await requirePaper(tx, id);
        if (metadata.authors) {
          const kept = new Set(metadata.authors);
          const dropped = (await papersRepository.claimsOn(tx, [id])).find(
            (claim) => !kept.has(claim.author_name),
          );
          if (dropped)
            throw badRequest(
              "claimed_author_removed",
              `"${dropped.author_name}" is claimed by an account; keep the name in the authors list.`,
              "authors",
            );
        }
        await papersRepository.update(tx, id, {
          ...(metadata.title === undefined ? {} : { title: metadata.title }),
          ...(metadata.authors === undefined ? {} : { authors: JSON.stringify(metadata.authors) }),
          ...(metadata.summary === undefined ? {} : { summary: metadata.summary }),
          ...(metadata.publishedAt === undefined ? {} : { published_at: metadata.publishedAt }),
          ...(body.version === undefined ? {} : { version: body.version }),
          updated_at: clock().toISOString(),
        });
      });
      return this.paper(principal, id);
    },

    async submissions(userId: string): Promise<PaperSubmission[]> {
      return presentSubmissions(await papersRepository.submissionsOf(db, userId));
    },

    /**
     * Puts a paper on the papers page, recording it from the metadata given
     * when the hub does not know it yet. A paper is submitted once (409).
     */
    async submit(principal: Principal, body: CreatePaperSubmission): Promise<PaperSubmission> {
      const arxivId = arxivIdOf(body.arxivId, "arxivId");
      const duplicate = await submittedAlready(principal.userId, arxivId.id);
      if (duplicate) throw duplicate;
      const known = await papersRepository.find(db, arxivId.id);
      const paper = known ? null : newPaper(arxivId, body);
      const row: PaperSubmissionRow = {
        id: randomUUID(),
        user_id: principal.userId,
        arxiv_id: arxivId.id,
        created_at: clock().toISOString(),
      };
      try {
        await db.transaction().execute(async (tx) => {
          if (paper) await papersRepository.insertIfAbsent(tx, paper);
          await papersRepository.insertSubmission(tx, row);
        });
      } catch (err) {
        throw (await submittedAlready(principal.userId, arxivId.id)) ?? err;
      }
      const [shown] = await presentSubmissions([row]);
      if (!shown) throw notFound(`arXiv ${arxivId.id} was withdrawn meanwhile.`);
      return shown;
    },

    /** Withdraws one of the account's submissions; the record goes too unless a claim keeps it. */
    async withdrawSubmission(userId: string, id: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const row = await papersRepository.findSubmission(tx, userId, id);
        if (!row) throw notFound("No such submission; list yours at GET /api/me/paper-submissions.");
        await papersRepository.deleteSubmission(tx, row.id);
        await papersRepository.deleteIfUnreferenced(tx, row.arxiv_id);
      });
    },

    async claims(userId: string): Promise<PaperClaim[]> {
      return presentClaims(await papersRepository.claimsOf(db, userId));
    },

    /**
     * Claims authorship of a paper as one of its authors, recording the paper
     * from the metadata given when the hub does not know it yet.
     */
    async claim(principal: Principal, body: CreatePaperClaim): Promise<PaperClaim> {
      const arxivId = arxivIdOf(body.arxivId, "arxivId");
      const authorName = body.authorName.trim();
      if (!authorName) throw badRequest("unknown_author", "The author name may not be blank.", "authorName");
      const known = await papersRepository.find(db, arxivId.id);
      const paper = known ?? newPaper(arxivId, body);
      requireAuthor(paper, authorName);
      const duplicate = await claimedAlready(principal.userId, arxivId.id, authorName);
      if (duplicate) throw duplicate;
      const now = clock().toISOString();
      const row: PaperClaimRow = {
        id: randomUUID(),
        user_id: principal.userId,
        arxiv_id: arxivId.id,
        author_name: authorName,
        visible: body.visible === false ? 0 : 1,
        created_at: now,
        updated_at: now,
      };
      try {
        await db.transaction().execute(async (tx) => {
          if (!known) await papersRepository.insertIfAbsent(tx, paper);
          // Another request may have recorded the paper first, with its own authors.
          requireAuthor(await requirePaper(tx, arxivId.id), authorName);
          await papersRepository.insertClaim(tx, row);
        });
      } catch (err) {
        throw (await claimedAlready(principal.userId, arxivId.id, authorName)) ?? err;
      }
      const [shown] = await presentClaims([row]);
      if (!shown) throw notFound(`arXiv ${arxivId.id} was removed meanwhile.`);
      return shown;
    },

    /** Shows or hides one of the account's claims on its profile and on the paper. */
    async setVisibility(userId: string, claimId: string, visible: boolean): Promise<PaperClaim> {
      const row = await papersRepository.findClaim(db, userId, claimId);
      if (!row) throw notFound("No such claim; list yours at GET /api/me/papers.");
      const now = clock().toISOString();
      await papersRepository.setClaimVisible(db, row.id, visible, now);
      const [shown] = await presentClaims([{ ...row, visible: visible ? 1 : 0, updated_at: now }]);
      if (!shown) throw notFound("No such claim; list yours at GET /api/me/papers.");
      return shown;
    },

    /** Withdraws one of the account's claims; the record goes too unless a submission or another claim keeps it. */
    async withdrawClaim(userId: string, claimId: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const row = await papersRepository.findClaim(tx, userId, claimId);
        if (!row) throw notFound("No such claim; list yours at GET /api/me/papers.");
        await papersRepository.deleteClaim(tx, row.id);
        await papersRepository.deleteIfUnreferenced(tx, row.arxiv_id);
      });
    },
  };
}

export type PapersService = ReturnType<typeof createPapersService>;
