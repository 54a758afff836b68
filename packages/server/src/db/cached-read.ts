import type { ChangeEpoch } from "./change-epoch.js";
import type { DbOrTx } from "./database.js";

/** How many results one cached read keeps at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

/** The results of one cached read, all from the same epoch. */
class ReadResults {
  private epoch = -1;
  private readonly entries = new Map<string, Promise<unknown>>();

  get<T>(epoch: number, key: string, load: () => Promise<T>): Promise<T> {
    // An epoch older than the kept one (asked before it, answered after) reads past the cache.
    if (epoch < this.epoch) return load().then(frozen);
    if (epoch !== this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    const hit = this.entries.get(key);
    if (hit) return hit as Promise<T>;
    const value = load().then(frozen);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, value);
    value.catch(() => {
      if (this.entries.get(key) === value) this.entries.delete(key);
    });
    return value;
  }
}

/** Cached results are shared between requests: nobody may change one. */
function frozen<T>(value: T): T {
  if (Array.isArray(value)) value.forEach(frozen);
  if (value !== null && typeof value === "object") Object.freeze(value);
  return value;
}

interface Cache {
  epoch: ChangeEpoch;
  reads: Map<symbol, ReadResults>;
}

const cachesOf = new WeakMap<object, Cache>();

/**
 * Lets the cached reads of `db` keep their results while `epoch` holds. Only
 * the serving processes do; elsewhere (the admin CLI, a transaction) the same
 * reads go to the database every time.
 */
export function cacheReadsOf(db: DbOrTx, epoch: ChangeEpoch): void {
  cachesOf.set(db, { epoch, reads: new Map() });
}

/**
 * A read whose result is kept until the database next changes one of the
 * tables migration 0023 notes, in any process: the hot paths (token, session
 * and key lookups, memberships, repositories, billing settings) read the
 * database once per change instead of once per request. The read must depend
 * only on noted tables and its arguments, and its callers must not change
 * what it returns (results are frozen). The epoch is taken before the read
 * starts, so a change that lands while it runs retires its result.
 */
export function cachedRead<Args extends string[], T>(
  name: string,
  read: (db: DbOrTx, ...args: Args) => Promise<T>,
): (db: DbOrTx, ...args: Args) => Promise<T> {
  const id = Symbol(name);
  const readAt = (cache: Cache, epoch: number | null, db: DbOrTx, args: Args): Promise<T> => {
    if (epoch === null) return read(db, ...args);
    let results = cache.reads.get(id);
    if (!results) cache.reads.set(id, (results = new ReadResults()));
    return results.get(epoch, args.join("\u0000"), () => read(db, ...args));
  };
  return (db, ...args) => {
    const cache = cachesOf.get(db);
    if (!cache) return read(db, ...args);
    const epoch = cache.epoch.current();
    return epoch instanceof Promise
      ? epoch.then((known) => readAt(cache, known, db, args))
      : readAt(cache, epoch, db, args);
  };
}
