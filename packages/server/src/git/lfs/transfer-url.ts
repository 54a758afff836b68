import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * How long a transfer URL stays valid, the hub's signed hrefs and the store's presigned URLs alike: long enough
 * to start a large transfer, short enough to limit a leaked URL.
 */
export const TRANSFER_URL_TTL_SECONDS = 3600;

/** What a signed transfer URL allows: one operation on one object of one repository, for one credential, until it expires. */
export interface TransferGrant {
  operation: "upload" | "download";
  repositoryId: string;
  oid: string;
  size: number;
  /** Unix seconds. */
  expires: number;
  /** The credential it was issued to (see credentialKey); re-checked on use. */
  credential: string;
  /** For one part of a multipart upload, its number (from 1). */
  part?: number;
  /** For a multipart upload, the session its parts belong to, so concurrent uploads of one object stay apart. */
  session?: string;
}

function signature(key: Buffer, grant: TransferGrant): Buffer {
  const text = [
    grant.operation,
    grant.repositoryId,
    grant.oid,
    grant.size,
    grant.expires,
    grant.credential,
    grant.part ?? "",
    grant.session ?? "",
  ].join("\n");
  return createHmac("sha256", key).update(text).digest();
}

/**
 * Git LFS action hrefs carry their own authorization in the URL, because some
 * clients send the PUT with no headers at all. The signature binds every field.
 */
export function signTransferUrl(key: Buffer, endpoint: string, grant: TransferGrant): string {
  const query = new URLSearchParams({
    op: grant.operation,
    repo: grant.repositoryId,
    size: String(grant.size),
    exp: String(grant.expires),
    cred: grant.credential,
    ...(grant.part !== undefined ? { part: String(grant.part) } : {}),
    ...(grant.session !== undefined ? { session: grant.session } : {}),
    sig: signature(key, grant).toString("base64url"),
  });
  return `${endpoint}/${grant.oid}?${query.toString()}`;
}

/** The grant a URL's query carries, or null when it is malformed, forged or expired. */
export function verifyTransferUrl(
  key: Buffer,
  oid: string,
  query: Record<string, unknown>,
  nowSeconds: number,
): TransferGrant | null {
  const { op, repo, size, exp, cred, sig, part, session } = query;
  if (session !== undefined && (typeof session !== "string" || !/^[0-9a-f]{16}$/.test(session))) return null;
  if (op !== "upload" && op !== "download") return null;
  if (typeof repo !== "string" || typeof cred !== "string" || typeof sig !== "string") return null;
  const partNumber = part === undefined ? undefined : Number(part);
  if (partNumber !== undefined && !(Number.isSafeInteger(partNumber) && partNumber >= 1)) return null;
  const grant: TransferGrant = {
    operation: op,
    repositoryId: repo,
    oid,
    size: Number(size),
    expires: Number(exp),
    credential: cred,
    ...(partNumber !== undefined ? { part: partNumber } : {}),
    ...(typeof session === "string" ? { session } : {}),
  };
  if (!Number.isSafeInteger(grant.size) || !Number.isSafeInteger(grant.expires)) return null;
  const expected = signature(key, grant);
  const presented = Buffer.from(sig, "base64url");
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  return grant.expires >= nowSeconds ? grant : null;
}
