import type { Readable } from "node:stream";

/** A Git LFS object id: the SHA-256 of the content, in lower-case hex. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when uploaded bytes do not match the oid or size they were sent for. */
export class ObjectMismatchError extends Error {}

/**
 * Content-addressed storage for Git LFS objects (https://github.com/git-lfs/git-lfs/blob/main/docs/api/basic-transfers.md).
 * Local disk now; an S3-compatible store can implement the same interface.
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
}
