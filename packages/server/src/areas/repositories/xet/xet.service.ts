import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ResolveCredentialKey } from "../../../auth/authenticate.js";
import type { Authorize } from "../../../auth/authorizer.js";
import type { Db } from "../../../db/database.js";
import type { FoundRepo, RepoLookup } from "../../../domain/repositories.js";
import type { OfferXetUpload } from "../../../domain/xet-offer.js";
import type { ObjectStore } from "../../../git/lfs/object-store.js";
import { createXetAccess } from "./xet-access.js";
import { createXetDownloads } from "./xet-downloads.js";
import { createXetUploads } from "./xet-uploads.js";
import { createXorbCatalog } from "./xet-xorbs.js";
import { xetRepository } from "./xet.repository.js";

/** Where the CAS API is served on the Hub listener; the token routes answer `{publicUrl}{prefix}` as `casUrl`. */
export const XET_CAS_PREFIX = "/xet-cas";
/** The object store namespace xorbs are kept in. */
export const XORB_NAMESPACE = "xet/xorbs";

export interface XetServiceDeps {
  db: Db;
  repos: RepoLookup;
  store: ObjectStore;
  authorize: Authorize;
  resolveCredentialKey: ResolveCredentialKey;
  serverKey: Buffer;
  clock: () => Date;
  publicUrl: string;
  tokenTtlSeconds: number;
  logger: Logger;
}

/**
 * Xet storage (docs/xet.md): the token routes' tokens, and the CAS the clients upload to and read from, served
 * by the hub itself. Uploaded files become ordinary Git LFS objects of their repository (one store of file
 * contents for every download path); the xorbs they came in are kept beside them for deduplication and
 * reconstruction.
 */
export function createXetService(deps: XetServiceDeps) {
  const casUrl = `${deps.publicUrl}${XET_CAS_PREFIX}`;
  const access = createXetAccess({ ...deps, casUrl });
  const xorbs = deps.store.namespace(XORB_NAMESPACE);
  const catalog = createXorbCatalog({ db: deps.db, repos: deps.repos, access });
  return {
    casUrl,
    /**
     * The Xet hashes of those of a repository's LFS objects its CAS can rebuild (none when the repository's
     * xetEnabled is off): downloads then announce them, and the clients read the file through Xet.
     */
    async fileHashesOf(repo: FoundRepo, oids: string[]): Promise<Map<string, string>> {
      if (repo.row.xet_enabled !== 1 || oids.length === 0) return new Map();
      return xetRepository.fileHashesOf(deps.db, [...new Set(oids)]);
    },
    /** The token route a client refreshes its Xet read token at, for a revision of a repository. */
    readTokenUrl(repo: FoundRepo, revision: string): string {
      return `${deps.publicUrl}/api/${repo.type}s/${repo.fullName}/xet-read-token/${encodeURIComponent(revision)}`;
    },
    mint: access.mint,
    /**
     * The upload action of a Git LFS batch that offered the "xet" transfer (the JavaScript client, Python
     * releases 0.36 to 1.19): a token minted now, and the xet-write-token route to refresh it at.
     */
    offerUpload: ((principal, repo, { ref, pullRequestOnly }) => {
      if (repo.row.xet_enabled !== 1) return null;
      const token = access.mint(principal, repo, pullRequestOnly ? "pull-request" : "write");
      const revision = ref?.replace(/^refs\/heads\//, "") ?? "None";
      const route = `${deps.publicUrl}/api/${repo.type}s/${repo.fullName}/xet-write-token/${encodeURIComponent(revision)}`;
      return {
        href: ref === undefined ? `${route}?create_pr=1` : route,
        header: {
          "X-Xet-Cas-Url": token.casUrl,
          "X-Xet-Access-Token": token.accessToken,
          "X-Xet-Token-Expiration": String(token.exp),
          "X-Xet-Session-Id": randomUUID(),
        },
        expires_in: token.exp - Math.floor(deps.clock().getTime() / 1000),
      };
    }) satisfies OfferXetUpload,
    admit: access.admit,
    ...createXetUploads({ ...deps, xorbs, catalog }),
    ...createXetDownloads({ ...deps, xorbs, catalog, casUrl }),
  };
}

export type XetService = ReturnType<typeof createXetService>;
