import { createHmac, timingSafeEqual } from "node:crypto";

/** Marks the tokens the Xet token routes hand out, so they are never taken for anything else. */
const PREFIX = "hubxet1.";

/** What a Xet token allows on its repository: reading, writing, or writing for a pull request only. */
export type XetAccess = "read" | "write" | "pull-request";

/** What a Xet token stands for: one credential's access to one repository, until it expires. */
export interface XetGrant {
  /** The credential it was issued to (see credentialKey); resolved again on every CAS request. */
  credential: string;
  repositoryId: string;
  access: XetAccess;
  /** Unix seconds. */
  expires: number;
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac("sha256", key).update(`xet-cas\n${payload}`).digest();
}

/**
 * A short-lived bearer token for the Xet CAS (https://huggingface.co/docs/xet/auth): it names the credential,
 * the repository and the access it was minted for, signed with the server key, and is stored nowhere. The CAS
 * resolves the credential and asks `decide()` again on every request, so revoking the credential or losing the
 * access stops it at once; the expiry only bounds how long a leaked token is worth anything.
 */
export function mintXetToken(key: Buffer, grant: XetGrant): string {
  const payload = Buffer.from(
    JSON.stringify({ c: grant.credential, r: grant.repositoryId, a: grant.access, e: grant.expires }),
  ).toString("base64url");
  return `${PREFIX}${payload}.${mac(key, payload).toString("base64url")}`;
}

const ACCESS = new Set<string>(["read", "write", "pull-request"]);

/** The grant a token carries, or null when it is not one of ours, is forged, or has expired. */
export function verifyXetToken(key: Buffer, token: string, nowSeconds: number): XetGrant | null {
  if (!token.startsWith(PREFIX)) return null;
  const [payload = "", signature = "", ...rest] = token.slice(PREFIX.length).split(".");
  if (rest.length > 0) return null;
  const presented = Buffer.from(signature, "base64url");
  const expected = mac(key, payload);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  try {
    const { c, r, a, e } = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<
      string,
      unknown
    >;
    if (typeof c !== "string" || typeof r !== "string" || typeof a !== "string" || !ACCESS.has(a))
      return null;
    if (typeof e !== "number" || !Number.isSafeInteger(e) || e < nowSeconds) return null;
    return { credential: c, repositoryId: r, access: a as XetAccess, expires: e };
  } catch {
    return null;
  }
}
