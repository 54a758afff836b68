/** What kind of object a {@link XetFormatError} is about. */
export type XetObjectKind = "hash" | "chunk" | "xorb" | "shard" | "lz4" | "reconstruction";

/** Where in an object the problem was found, when it is known. */
export interface XetFormatErrorLocation {
  /** Byte offset into the object (the xorb, the shard or the LZ4 frame) where the problem starts. */
  offset?: number;
  /** Index of the chunk (in a xorb) the problem is about. */
  chunkIndex?: number;
  /** Index of the file (in a shard's file info section) the problem is about. */
  fileIndex?: number;
  /** Index of the xorb (in a shard's CAS info section) the problem is about. */
  xorbIndex?: number;
}

/**
 * A Xet object (hash string, xorb, shard, LZ4 frame, byte range) that does not follow the Xet Protocol
 * Specification. The message names what is wrong and where (the byte offset, the chunk), so the server can
 * answer 400 with it as is: the client sent the object, the mistake is in the client.
 * https://huggingface.co/docs/xet
 */
export class XetFormatError extends Error {
  readonly kind: XetObjectKind;
  readonly offset: number | undefined;
  readonly chunkIndex: number | undefined;
  readonly fileIndex: number | undefined;
  readonly xorbIndex: number | undefined;

  constructor(kind: XetObjectKind, message: string, location: XetFormatErrorLocation = {}) {
    super(message);
    this.name = "XetFormatError";
    this.kind = kind;
    this.offset = location.offset;
    this.chunkIndex = location.chunkIndex;
    this.fileIndex = location.fileIndex;
    this.xorbIndex = location.xorbIndex;
  }
}
