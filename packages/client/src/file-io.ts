import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";

/** How far a long operation has got, for progress bars. */
export interface Progress {
  /** `hash`: computing a file's SHA-256; `upload`, `download`: moving its bytes. */
  phase: "hash" | "upload" | "download";
  /** The file's path in the repository. */
  path: string;
  /** Bytes done so far, counting bytes done by an earlier, resumed run. */
  bytes: number;
  total: number;
}

export type OnProgress = (progress: Progress) => void;

const CHUNK = 1024 * 1024;

/**
 * Bytes `start` to `end` (exclusive) of a file as a web stream that reads one
 * chunk only when the consumer pulls, so a file of any size is sent with
 * constant memory.
 */
export function fileRangeStream(
  file: string,
  start: number,
  end: number,
  onBytes?: (sent: number) => void,
): ReadableStream<Uint8Array> {
  let position = start;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        handle ??= await open(file, "r");
        const length = Math.min(CHUNK, end - position);
        if (length <= 0) {
          await handle.close();
          controller.close();
          return;
        }
        const buffer = Buffer.allocUnsafe(length);
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        if (bytesRead === 0) {
          await handle.close();
          controller.error(new Error(`${file} became shorter while it was being sent.`));
          return;
        }
        position += bytesRead;
        onBytes?.(position - start);
        controller.enqueue(buffer.subarray(0, bytesRead));
      },
      async cancel() {
        await handle?.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/** The SHA-256 of a file (hex), read through one reused buffer, so hashing any size makes no garbage. */
export async function sha256File(file: string, onBytes?: (bytes: number) => void): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(CHUNK);
  const handle = await open(file, "r");
  try {
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, bytes);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      bytes += bytesRead;
      onBytes?.(bytes);
    }
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}

/** The first `length` bytes of a file. */
export async function readHead(file: string, length: number): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A web stream pulled from an async generator; cancelling it ends the generator. */
export function streamFromGenerator(source: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await source.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        await source.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}

/** A file's content in base64, chunk by chunk (each chunk a multiple of 3 bytes, so the pieces join). */
export async function* base64File(file: string): AsyncGenerator<string> {
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, {
    highWaterMark: 3 * 256 * 1024,
  }) as AsyncIterable<Buffer>) {
    const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const whole = joined.length - (joined.length % 3);
    if (whole > 0) yield joined.subarray(0, whole).toString("base64");
    carry = Buffer.from(joined.subarray(whole));
  }
  if (carry.length > 0) yield carry.toString("base64");
}
