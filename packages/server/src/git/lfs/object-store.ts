import type { Readable } from "node:stream";

/** A Git LFS object id: the SHA-256 of the content, in lower-case hex. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Raised when uploaded bytes do not match the oid or size they were sent for. */
export class ObjectMismatchError extends Error {}

/** A key of a namespace: 64 lower-case hex characters (a Xet hash in its string form). */
export const NAMESPACED_KEY_PATTERN = /^[0-9a-f]{64}$/;

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
  /** Deletes an object (one already gone is fine). */
  remove(key: string): Promise<void>;
}

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
  /** The objects of a namespace (`xet/xorbs`): lower-case words separated by `/`. */
  namespace(name: string): NamespacedObjects;
}
