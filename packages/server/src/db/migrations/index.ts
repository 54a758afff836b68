import type { Migration, MigrationProvider } from "kysely";
import { foundation } from "./0001-foundation.js";
import { repositories } from "./0002-repositories.js";
import { lfs } from "./0003-lfs.js";
import { repoRedirects } from "./0004-repo-redirects.js";
import { lfsLocks } from "./0005-lfs-locks.js";
import { accountKeys } from "./0006-account-keys.js";
import { inference } from "./0007-inference.js";
import { gpgKeyIdsTable } from "./0008-gpg-key-ids.js";
import { webhooks } from "./0009-webhooks.js";
import { deviceCodes } from "./0010-device-codes.js";
import { userProfiles } from "./0011-user-profiles.js";
import { handleReservations } from "./0012-handle-reservations.js";
import { socialIdentities } from "./0013-social-identities.js";
import { userHardware } from "./0014-user-hardware.js";
import { contentPreferences } from "./0015-content-preferences.js";
import { repoGating } from "./0016-repo-gating.js";
import { billingAccounts } from "./0017-billing-accounts.js";
import { mfa } from "./0018-mfa.js";
import { organizationSso } from "./0019-organization-sso.js";
import { papers } from "./0020-papers.js";
import { deletedHandleReservations } from "./0021-deleted-handle-reservations.js";
import { followsAndSpaceSdk } from "./0022-follows-and-space-sdk.js";
import { changeNotes } from "./0023-change-notes.js";
import { sessionInferenceTokens } from "./0024-session-inference-tokens.js";
import { discussions } from "./0025-discussions.js";
import { xet } from "./0026-xet.js";
import { changeCounters } from "./0027-change-counters.js";
import { discovery } from "./0028-discovery.js";
import { listingIndexes } from "./0030-listing-indexes.js";
import { likesAndCollections } from "./0029-likes-and-collections.js";
import { nameSearch } from "./0031-name-search.js";
import { ggufFacts } from "./0032-gguf-facts.js";

/**
 * Every migration in order; the keys sort in the order they must run. Numbers
 * may leave gaps, and one filled in later still runs where the later ones
 * already have (the migrator allows unordered migrations).
 */
const migrations: Record<string, Migration> = {
  "0001-foundation": foundation,
  "0002-repositories": repositories,
  "0003-lfs": lfs,
  "0004-repo-redirects": repoRedirects,
  "0005-lfs-locks": lfsLocks,
  "0006-account-keys": accountKeys,
  "0007-inference": inference,
  "0008-gpg-key-ids": gpgKeyIdsTable,
  "0009-webhooks": webhooks,
  "0010-device-codes": deviceCodes,
  "0011-user-profiles": userProfiles,
  "0012-handle-reservations": handleReservations,
  "0013-social-identities": socialIdentities,
  "0014-user-hardware": userHardware,
  "0015-content-preferences": contentPreferences,
  "0016-repo-gating": repoGating,
  "0017-billing-accounts": billingAccounts,
  "0018-mfa": mfa,
  "0019-organization-sso": organizationSso,
  "0020-papers": papers,
  "0021-deleted-handle-reservations": deletedHandleReservations,
  "0022-follows-and-space-sdk": followsAndSpaceSdk,
  "0023-change-notes": changeNotes,
  "0024-session-inference-tokens": sessionInferenceTokens,
  "0025-discussions": discussions,
  "0026-xet": xet,
  "0027-change-counters": changeCounters,
  "0028-discovery": discovery,
  "0029-likes-and-collections": likesAndCollections,
  "0030-listing-indexes": listingIndexes,
  "0031-name-search": nameSearch,
  "0032-gguf-facts": ggufFacts,
};

/** Hands Kysely's migrator the migrations compiled into the server, not files read at run time. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
