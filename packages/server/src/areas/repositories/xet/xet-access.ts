import { credentialKey, type ResolveCredentialKey } from "../../../auth/authenticate.js";
import type { Action } from "../../../auth/authorize.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Principal } from "../../../auth/credential.js";
import { mintXetToken, verifyXetToken, type XetAccess, type XetGrant } from "../../../auth/xet-token.js";
import { repoResource, type FoundRepo, type RepoLookup } from "../../../domain/repositories.js";
import { HubError } from "../../../errors.js";

/** The refusal of a hub, or a repository, without Xet: the message the Python client shows, and what to do. */
export function xetUnavailable(): HubError {
  return new HubError(
    404,
    "xet_unavailable",
    "This repository stores large files with Git LFS, not Xet: set HF_HUB_DISABLE_XET=1 and retry.",
    {
      headers: {
        "x-error-code": "XetUnavailable",
        "x-error-message": "Xet is not available on this hub; set HF_HUB_DISABLE_XET=1",
      },
    },
  );
}

/** What a CAS request was admitted as: the token's grant, its credential resolved again, and the repository. */
export interface CasCaller {
  grant: XetGrant;
  principal: Principal | null;
  repo: FoundRepo;
}

/** The answer of the token routes, as hf_xet reads it (https://huggingface.co/docs/xet/auth). */
export interface XetTokenAnswer {
  accessToken: string;
  casUrl: string;
  /** Unix seconds. */
  exp: number;
}

export interface XetAccessDeps {
  repos: RepoLookup;
  authorize: Authorize;
  resolveCredentialKey: ResolveCredentialKey;
  serverKey: Buffer;
  clock: () => Date;
  /** The CAS's base URL as clients see it: the hub's public URL and the CAS prefix. */
  casUrl: string;
  tokenTtlSeconds: number;
}

/** The action a CAS operation needs under a grant: reads download, writes write (or open pull requests). */
function actionFor(access: XetAccess, operation: "read" | "write"): Action {
  if (operation === "read") return "repo:download";
  return access === "pull-request" ? "community:write" : "repo:write";
}

/**
 * Xet tokens and the admission of CAS requests. A token is minted by a route that already decided the caller's
 * access (`xet-read-token`: `repo:download`; `xet-write-token`: `repo:write`, or `community:write` for a pull
 * request); each CAS request resolves its credential again and asks `decide()` again, so a revoked token, a
 * lost membership or a repository made private stops it on the next request.
 */
export function createXetAccess(deps: XetAccessDeps) {
  const { repos, authorize, resolveCredentialKey, serverKey, clock, casUrl, tokenTtlSeconds } = deps;
  const now = () => Math.floor(clock().getTime() / 1000);

  return {
    /** A token for the caller's access to the repository (already decided by the route). */
    mint(principal: Principal | null, repo: FoundRepo, access: XetAccess): XetTokenAnswer {
      if (repo.row.xet_enabled !== 1) throw xetUnavailable();
      const exp = now() + tokenTtlSeconds;
      const grant = { credential: credentialKey(principal), repositoryId: repo.row.id, access, expires: exp };
      return { accessToken: mintXetToken(serverKey, grant), casUrl, exp };
    },

    /**
     * Admits a CAS request by its `Authorization: Bearer <xet token>`: a token that is not one, has expired or
     * whose credential is gone is a 401 (hf_xet then asks the token route for a new one); a read token used to
     * write is a 403; then `decide()` on the repository, as the route that minted it did.
     */
    async admit(authorization: string | undefined, operation: "read" | "write"): Promise<CasCaller> {
      const [scheme, token = ""] = (authorization ?? "").trim().split(/\s+/, 2);
      const grant = scheme?.toLowerCase() === "bearer" ? verifyXetToken(serverKey, token, now()) : null;
      if (!grant) {
        throw new HubError(
          401,
          "xet_token_invalid",
          "Send a Xet token from xet-read-token or xet-write-token as Authorization: Bearer <token>; this one is missing, invalid or expired.",
          { headers: { "www-authenticate": 'Bearer realm="xet"' } },
        );
      }
      if (operation === "write" && grant.access === "read") {
        throw new HubError(
          403,
          "forbidden",
          "This Xet token only reads; ask xet-write-token for one that uploads.",
        );
      }
      const principal = await resolveCredentialKey(grant.credential);
      if (principal === undefined) {
        throw new HubError(
          401,
          "invalid_token",
          "The credential this Xet token was issued to is no longer valid.",
          {
            headers: { "www-authenticate": 'Bearer realm="xet"' },
          },
        );
      }
      const repo = await repos.findById(grant.repositoryId);
      if (!repo)
        throw new HubError(404, "repo_not_found", "The repository of this Xet token no longer exists.");
      await authorize(principal, actionFor(grant.access, operation), repoResource(repo));
      if (repo.row.xet_enabled !== 1) throw xetUnavailable();
      return { grant, principal, repo };
    },

    /** Whether the caller may read a repository (its files, so its xorbs): `repo:download` through `decide()`. */
    async mayRead(principal: Principal | null, repo: FoundRepo): Promise<boolean> {
      try {
        await authorize(principal, "repo:download", repoResource(repo));
        return true;
      } catch (err) {
        if (err instanceof HubError) return false;
        throw err;
      }
    },
  };
}

export type XetAccessService = ReturnType<typeof createXetAccess>;
