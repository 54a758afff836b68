import type {
  AccessRequest,
  AccessRequestFields,
  AccessRequestStatus,
  GatedRepositoryList,
  GatedRepositoryRequest,
  HandleAccessRequest,
} from "@hub/api";
import type { Action } from "../../../auth/authorize.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import type { Db } from "../../../db/database.js";
import type { RepoAccessRequestRow } from "../../../db/schema.js";
import { HubError, badRequest, conflict, forbidden, notFound } from "../../../errors.js";
import { usersRepository } from "../../accounts/account/users.repository.js";
import { type ReposService } from "../repos/repos.service.js";
import { gateModeOf, repoResource, type FoundRepo } from "../../../domain/repositories.js";
import { gatingRepository } from "./gating.repository.js";

export interface GatingDeps {
  db: Db;
  clock: () => Date;
  repos: ReposService;
  authorize: Authorize;
}

const parseFields = (fields: string | null): { fields?: AccessRequestFields } =>
  fields === null ? {} : { fields: JSON.parse(fields) as AccessRequestFields };

/** One of the caller's requests, as `GET /api/me/gated-repositories` lists it. */
function ownRequest(row: RepoAccessRequestRow, repo: FoundRepo): GatedRepositoryRequest {
  return {
    repoType: repo.type,
    repoId: repo.fullName,
    gated: gateModeOf(repo.row),
    status: row.status,
    requestedAt: row.requested_at,
    decidedAt: row.decided_at,
    rejectionReason: row.rejection_reason,
    ...parseFields(row.fields),
  };
}

/** A request as the repository's writers see it, in the Hugging Face shape. */
function reviewedRequest(
  row: RepoAccessRequestRow,
  user: { handle: string; fullname: string; email: string },
): AccessRequest {
  return {
    requestId: row.user_id,
    user: { user: user.handle, fullname: user.fullname, email: user.email },
    status: row.status,
    timestamp: row.requested_at,
    ...parseFields(row.fields),
    decidedAt: row.decided_at,
    rejectionReason: row.rejection_reason,
  };
}

/** The review endpoints and asking both need a gated repository, as Hugging Face answers otherwise. */
function requireGated(repo: FoundRepo): void {
  if (gateModeOf(repo.row) === false) {
    throw badRequest(
      "repo_not_gated",
      `${repo.fullName} is not gated: anyone who may read it downloads it. Its writers gate it with PUT /api/${repo.type}s/${repo.fullName}/settings {"gated": "auto" | "manual"}.`,
    );
  }
}

/**
 * Access requests to gated repositories: accounts ask (accepted at once in
 * `auto` mode, pending in `manual`), withdraw a pending request, and see their
 * requests; the repository's writers list, accept, reject, reset to pending
 * and grant. Downloads read the decision through the authorizer, so each
 * change applies to the very next request.
 */
export function createGatingService({ db, clock, repos, authorize }: GatingDeps) {
  /** The account a review names, or 404. */
  async function requester(handle: string) {
    const user = await usersRepository.findByHandle(db, handle);
    if (!user) throw notFound(`No user is called "${handle}"; check the username.`);
    return user;
  }

  /** Whether the authorization rules allow the action; a refusal is false. */
  /** The requester `handle` names: by `user`, or by `requestId` (the requester's account id) as huggingface_hub 2 sends. */
  async function reviewed(repo: FoundRepo, body: HandleAccessRequest) {
    if ((body.user === undefined) === (body.requestId === undefined)) {
      throw badRequest(
        "invalid_access_request_handle",
        "Name the request by exactly one of `user` (the requester's username) or `requestId` (as the request lists show it).",
        "user",
      );
    }
    if (body.user !== undefined) return requester(body.user);
    const user = await usersRepository.findById(db, body.requestId ?? "");
    if (!user) {
      throw new HubError(
        404,
        "access_request_not_found",
        `${repo.fullName} has no access request ${body.requestId ?? ""}; list them with GET …/user-access-request/pending.`,
      );
    }
    return user;
  }

  async function allows(principal: Principal, action: Action, repo: FoundRepo): Promise<boolean> {
    try {
      await authorize(principal, action, repoResource(repo));
      return true;
    } catch (err) {
      if (err instanceof HubError) return false;
      throw err;
    }
  }

  return {
    /** Asks for access to a gated repository for the caller. */
    async ask(
      repo: FoundRepo,
      principal: Principal,
      fields: AccessRequestFields | undefined,
    ): Promise<GatedRepositoryRequest> {
      requireGated(repo);
      const existing = await gatingRepository.find(db, repo.row.id, principal.userId);
      if (existing?.status === "pending") {
        throw conflict(
          "access_request_pending",
          `Your request for access to ${repo.fullName} already awaits review; withdraw it with DELETE on this URL to change it.`,
        );
      }
      if (existing?.status === "accepted") {
        throw conflict("access_already_granted", `You already have access to ${repo.fullName}.`);
      }
      if (existing?.status === "rejected") {
        throw forbidden(
          "access_request_rejected",
          `The authors of ${repo.fullName} rejected your request${existing.rejection_reason ? ` ("${existing.rejection_reason}")` : ""}; you may ask again only once they change their decision.`,
        );
      }
      if (await allows(principal, "repo:download", repo)) {
        throw conflict(
          "access_not_needed",
          `You may already download ${repo.fullName}: you own it or belong to its organization.`,
        );
      }
      const now = clock().toISOString();
      const auto = gateModeOf(repo.row) === "auto";
      const row: RepoAccessRequestRow = {
        repository_id: repo.row.id,
        user_id: principal.userId,
        status: auto ? "accepted" : "pending",
        fields: fields === undefined ? null : JSON.stringify(fields),
        requested_at: now,
        decided_at: auto ? now : null,
        rejection_reason: null,
      };
      if (!(await gatingRepository.insert(db, row))) {
        throw conflict(
          "access_request_pending",
          `You already asked for access to ${repo.fullName}; GET /api/me/gated-repositories shows where it stands.`,
        );
      }
      return ownRequest(row, repo);
    },

    /** Withdraws the caller's request while it awaits review. */
    async withdraw(repo: FoundRepo, principal: Principal): Promise<void> {
      if (await gatingRepository.withdrawPending(db, repo.row.id, principal.userId)) return;
      const existing = await gatingRepository.find(db, repo.row.id, principal.userId);
      if (!existing) {
        throw new HubError(
          404,
          "access_request_not_found",
          `You have no request for access to ${repo.fullName}.`,
        );
      }
      throw conflict(
        "access_request_decided",
        `Your request for access to ${repo.fullName} was already ${existing.status}; only a pending request can be withdrawn.`,
      );
    },

    /** A page of the repository's requests in one status, for its writers. */
    async list(
      repo: FoundRepo,
      status: AccessRequestStatus,
      page: { offset: number; limit: number },
    ): Promise<{ items: AccessRequest[]; next: number | null }> {
      requireGated(repo);
      const rows = await gatingRepository.listForRepository(
        db,
        repo.row.id,
        status,
        page.offset,
        page.limit + 1,
      );
      return {
        items: rows.slice(0, page.limit).map((row) => reviewedRequest(row, row)),
        next: rows.length > page.limit ? page.offset + page.limit : null,
      };
    },

    /** Moves a request to another list: accept, reject (with an optional reason) or back to pending. */
    async handle(repo: FoundRepo, body: HandleAccessRequest): Promise<AccessRequest> {
      if (body.rejectionReason !== undefined && body.status !== "rejected") {
        throw badRequest(
          "invalid_rejection_reason",
          'A rejection reason goes only with status "rejected"; leave it out.',
          "rejectionReason",
        );
      }
      requireGated(repo);
      const user = await reviewed(repo, body);
      const existing = await gatingRepository.find(db, repo.row.id, user.id);
      if (!existing) {
        throw new HubError(
          404,
          "access_request_not_found",
          `${user.handle} has not asked for access to ${repo.fullName}; grant access with POST …/user-access-request/grant instead.`,
        );
      }
      if (existing.status === body.status) {
        throw conflict(
          "access_request_unchanged",
          `The request of ${user.handle} is already ${body.status}.`,
          "status",
        );
      }
      const decision = {
        status: body.status,
        decided_at: body.status === "pending" ? null : clock().toISOString(),
        rejection_reason: body.status === "rejected" ? (body.rejectionReason ?? null) : null,
      };
      await gatingRepository.decide(db, repo.row.id, user.id, decision);
      return reviewedRequest({ ...existing, ...decision }, user);
    },

    /** Accepts a user who did not ask, or whose request is pending or rejected. */
    async grant(repo: FoundRepo, handle: string): Promise<AccessRequest> {
      requireGated(repo);
      const user = await requester(handle);
      const now = clock().toISOString();
      const decision = { status: "accepted" as const, decided_at: now, rejection_reason: null };
      const existing = await gatingRepository.find(db, repo.row.id, user.id);
      if (existing?.status === "accepted") {
        throw conflict("access_already_granted", `${user.handle} already has access to ${repo.fullName}.`);
      }
      if (existing) {
        await gatingRepository.decide(db, repo.row.id, user.id, decision);
        return reviewedRequest({ ...existing, ...decision }, user);
      }
      const row: RepoAccessRequestRow = {
        repository_id: repo.row.id,
        user_id: user.id,
        fields: null,
        requested_at: now,
        ...decision,
      };
      if (!(await gatingRepository.insert(db, row))) {
        throw conflict(
          "access_request_unchanged",
          `${user.handle} asked for access meanwhile; review the request instead.`,
        );
      }
      return reviewedRequest(row, user);
    },

    /** The caller's requests to repositories it may still read, newest first. */
    async mine(principal: Principal): Promise<GatedRepositoryList> {
      const requests: GatedRepositoryRequest[] = [];
      for (const row of await gatingRepository.listForUser(db, principal.userId)) {
        const repo = await repos.findById(row.repository_id);
        if (!repo) continue;
        if (await allows(principal, "repo:read", repo)) requests.push(ownRequest(row, repo));
      }
      return { requests };
    },
  };
}

export type GatingService = ReturnType<typeof createGatingService>;
