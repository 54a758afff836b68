import type { Readable } from "node:stream";
import type { RangedBody } from "../../http/ranged-response.js";

/** A Git LFS object id: the SHA-256 of the content, in lower-case hex. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when uploaded bytes do not match the oid or size they were sent for. */
export class ObjectMismatchError extends Error {}

/** A key of a namespace: 64 lower-case hex characters (a Xet hash in its string form). */
export const NAMESPACED_KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Refuses a namespace name that is not lower-case words separated by `/`, or that would mix with the LFS
 * objects, the stores' temporary files or the multipart parts kept beside them.
 */
export function checkNamespace(name: string): void {
  if (
    !/^[a-z0-9-]+(?:\/[a-z0-9-]+)*$/.test(name) ||
    ["objects", "tmp", "multipart"].includes(name.split("/")[0] ?? "")
  )
    throw new Error(`Not a namespace of the object store: ${name}`);
}

/**
 * Objects the caller has verified before storing them (a xorb, checked against its Xet hash), kept under a
 * namespace of the store beside the LFS objects, never mixed with them.
 */
export interface NamespacedObjects {
  /** The stored size of an object, or null when it is not stored. */
  size(key: string): Promise<number | null>;
  /**
   * Stores the bytes under `key`: written under a temporary name and renamed in, so no reader ever sees a
   * half-written object. An object already stored is kept; answers whether this call stored it.
   */
  put(key: string, bytes: Uint8Array): Promise<boolean>;
  /** Streams an object, or the inclusive byte range of it. */
  read(key: string, range?: { start: number; end: number }): Readable;
  /** As `ObjectStore.internalRedirect`: the URI a front nginx serves the object's file from, if configured. */
  internalRedirect?(key: string): string;
  /** Deletes an object (one already gone is fine). */
  remove(key: string): Promise<void>;
  /** Every stored object with its size, in no particular order (`hubd storage migrate` copies them). */
  list(): AsyncIterable<StoredObject>;
}

/** An object as a listing gives it. */
export interface StoredObject {
  key: string;
  size: number;
}

/** What a download URL the store signs itself names, besides the object. */
export interface SignedDownload {
  /** How long the URL works, in seconds. */
  expiresInSeconds: number;
  /** The file name a browser saves the download under (`Content-Disposition`). */
  filename?: string;
}

/**
 * Content-addressed storage for Git LFS objects (https://github.com/git-lfs/git-lfs/blob/main/docs/api/basic-transfers.md):
 * local disk (`local-object-store.ts`, the default) or an S3-compatible service (`s3-object-store.ts`), chosen by
 * `HUB_OBJECT_STORE` through `create-object-store.ts`.
 */
export interface ObjectStore {
  /** The stored size of an object, or null when it is not stored. */
  size(oid: string): Promise<number | null>;
  /**
   * Stores the stream as `oid`, hashing and counting it on the way in; throws
   * ObjectMismatchError, keeping nothing, when the bytes are not `size` bytes hashing to `oid`.
   */
  write(oid: string, size: number, body: Readable): Promise<void>;
  /** Streams an object, or the inclusive byte range of it. */
  read(oid: string, range?: { start: number; end: number }): Readable;
  /** Deletes an object (one already gone is fine); callers first make sure no repository links it. */
  remove(oid: string): Promise<void>;
  /** Every stored LFS object (its oid as `key`) with its size, in no particular order. */
  list(): AsyncIterable<StoredObject>;
  /** The objects of a namespace (`xet/xorbs`): lower-case words separated by `/`. */
  namespace(name: string): NamespacedObjects;
  /**
   * A URL that downloads the object straight from the store, with no credential, for a while; present only on
   * stores clients can reach (S3 presigned URLs). Callers check access before they ask for one: the URL is the
   * grant, valid until it expires, as the hub's own signed hrefs are.
   */
  signedDownloadUrl?(oid: string, options: SignedDownload): Promise<string>;
  /**
   * The URI a front nginx serves the object's file from (`X-Accel-Redirect`), present only on the local store
   * when the operator named nginx's internal location (`HUB_ACCEL_REDIRECT`). Callers check access first.
   */
  internalRedirect?(oid: string): string;
  /** Resolves once one cheap call reached the store (a health check's), or throws why not; `signal` gives up. */
  reachable(signal: AbortSignal): Promise<void>;
  /**
   * Removes what writes left behind and nobody has touched since `before`, none of it ever visible as an
   * object: a process killed mid-write leaves a temporary file on local disk, or an incomplete multipart
   * upload in a bucket (one still receiving parts since `before` is kept). Stops early, with what it removed so
   * far, once `signal` is aborted.
   */
  removeLeftovers(before: Date, signal?: AbortSignal): Promise<Leftovers>;
}

/**
 * A stored object as a body `sendRanged` sends whole or by range, or hands to a front nginx when the store
 * names its file (`internalRedirect`).
 */
export function storedBody(
  objects: Pick<NamespacedObjects, "read" | "internalRedirect">,
  key: string,
  size: number,
): RangedBody {
  const internalRedirect = objects.internalRedirect?.(key);
  return {
    size,
    open: (range) => objects.read(key, range),
    ...(internalRedirect ? { internalRedirect } : {}),
  };
}

/** What one pass over leftovers removed: how many (files, uploads, parts) and their bytes. */
export interface Leftovers {
  removed: number;
  freedBytes: number;
}
