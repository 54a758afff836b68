import type { Principal } from "../auth/credential.js";
import type { FoundRepo } from "./repositories.js";

/**
 * The `upload` action of a Git LFS batch answer with `transfer: "xet"`: the
 * xet-write-token route to refresh at (`href`), and a token already minted,
 * in the headers the Hugging Face clients read.
 */
export interface XetUploadAction {
  href: string;
  header: Record<string, string>;
  expires_in: number;
}

/**
 * Offers a batch upload through Xet, implemented by the Xet area: for a
 * caller the batch already admitted to upload (to `ref`, or for a pull
 * request a commit will open when `ref` is absent), with `pullRequestOnly`
 * when they may not write branches. Null when the repository has Xet off.
 */
export type OfferXetUpload = (
  principal: Principal | null,
  repo: FoundRepo,
  upload: { ref: string | undefined; pullRequestOnly: boolean },
) => XetUploadAction | null;
