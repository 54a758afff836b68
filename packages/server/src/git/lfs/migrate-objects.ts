import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import type { NamespacedObjects, ObjectStore, StoredObject } from "./object-store.js";

/** What a migration did: objects copied (and their bytes), found already there and verified, and failed. */
export interface MigrationReport {
  copied: number;
  copiedBytes: number;
  present: number;
  failed: Array<{ key: string; namespace: string | null; reason: string }>;
}

/**
 * A namespace to copy: its name, and where its objects are read when that is not the source store's namespace
 * of the name (avatars stored in the data dir before the hub moved to a store live in `DATA_DIR/avatars/`).
 */
export type NamespaceSource =
  | string
  | {
      name: string;
      from: Pick<NamespacedObjects, "list" | "read">;
      /** Each object is named by its content's SHA-256 (avatars): one that is not is reported, never copied. */
      namedBySha256?: boolean;
    };

/** Objects copied at once: enough to keep a remote store busy with small objects, few enough for 2 cores. */
const CONCURRENCY = 4;

async function digestOf(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), size };
}

/** Runs `work` on every item of `items`, a few at a time. */
async function eachConcurrently<T>(items: AsyncIterable<T>, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  const worker = async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/**
 * Copies every LFS object and every object of `namespaces` from one store to another (`hubd storage
 * migrate`), verifying each by size and SHA-256, and may be interrupted and run again at any point.
 *
 * An LFS object is written with the target's `write`, which hashes the bytes on the way and makes the
 * object visible only when they hash to its oid: one found at its key with its size was verified when it
 * was written, and is skipped. A namespace's keys are not content hashes (a xorb is named by its Xet hash),
 * so each is verified by reading it back from the target and comparing its SHA-256 with the source's, also
 * when a rerun finds it already there (a run may have stopped between the write and the check); one that
 * differs is replaced. A source object that fails (a local file that no longer hashes to its oid) is
 * reported and the rest go on.
 */
export async function migrateObjects(
  from: ObjectStore,
  to: ObjectStore,
  namespaces: readonly NamespaceSource[],
  progress: (report: MigrationReport) => void = () => {},
): Promise<MigrationReport> {
  const report: MigrationReport = { copied: 0, copiedBytes: 0, present: 0, failed: [] };
  const attempt = async (namespace: string | null, object: StoredObject, run: () => Promise<boolean>) => {
    try {
      if (await run()) {
        report.copied += 1;
        report.copiedBytes += object.size;
      } else report.present += 1;
    } catch (err) {
      report.failed.push({ key: object.key, namespace, reason: (err as Error).message });
    }
    progress(report);
  };

  await eachConcurrently(from.list(), (object) =>
    attempt(null, object, async () => {
      if ((await to.size(object.key)) === object.size) return false;
      await to.write(object.key, object.size, from.read(object.key));
      return true;
    }),
  );

  for (const namespace of namespaces) {
    const {
      name,
      from: source,
      namedBySha256 = false,
    } = typeof namespace === "string" ? { name: namespace, from: from.namespace(namespace) } : namespace;
    const target: NamespacedObjects = to.namespace(name);
    await eachConcurrently(source.list(), (object) =>
      attempt(name, object, async () => {
        const bytes = await buffer(source.read(object.key));
        const expected = createHash("sha256").update(bytes).digest("hex");
        if (namedBySha256 && expected !== object.key)
          throw new Error("The content does not hash to its name.");
        const verified = async () => {
          if ((await target.size(object.key)) !== bytes.length) return false;
          const stored = await digestOf(target.read(object.key));
          return stored.size === bytes.length && stored.sha256 === expected;
        };
        if (await verified()) return false;
        // Whatever is there (a different object under the key) goes; then the bytes, checked again.
        await target.remove(object.key);
        await target.put(object.key, bytes);
        if (!(await verified())) throw new Error("The copy in the target store does not match the source.");
        return true;
      }),
    );
  }
  return report;
}
