import type {
  ColumnNode,
  CompiledQuery,
  DatabaseConnection,
  DeleteQueryNode,
  Dialect,
  Driver,
  InsertQueryNode,
  OperationNode,
  QueryResult,
  TableNode,
  TransactionSettings,
  UpdateQueryNode,
} from "kysely";

/** How many statements that may change cached reads this process has run, commits included. */
export interface WriteCount {
  count: number;
  /**
   * Tells the deployment's other processes that such a change committed (a
   * statement outside a transaction, or the commit of a transaction that ran
   * one); the statement's caller waits for it, so the change is announced
   * before anyone hears of it (`db/change-epoch.ts`).
   */
  announce?: () => Promise<void>;
}

/**
 * Tables no cached read depends on, written often (activity counts, webhook
 * deliveries, the usage ledger, discussions and notifications, discovery's
 * index and counts): writing them
 * retires nothing.
 */
const UNCACHED_TABLES = new Set([
  "account_activity",
  "webhook_deliveries",
  "webhook_attempts",
  "inference_usage",
  "notifications",
  "discussions",
  "discussion_events",
  "discussion_reactions",
  "repo_watches",
  "repo_metadata",
  "repo_tags",
  "repo_base_models",
  "repo_stats",
  "repo_search",
  "repo_downloads",
  "repo_likes",
  "collections",
  "collection_items",
]);
/** A column whose update alone decides nothing: a token's or key's last use, noted as it is used. */
const USE_NOTES = new Map([
  ["access_tokens", "last_used_at"],
  ["account_keys", "last_used_at"],
]);

const nameOf = (node: OperationNode | undefined): string | null =>
  node?.kind === "TableNode" ? (node as TableNode).table.identifier.name : null;

const CONTROL = /^\s*(begin|start\s+transaction|commit|end|rollback|abort|savepoint|release)\b/i;
const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i;
const COMMIT = /^\s*(commit|end)\b/i;
/** A commit or a rollback of the whole transaction (`rollback to` a savepoint ends nothing). */
const TRANSACTION_END = /^\s*(commit|end|rollback|abort)\b(?!\s+to\b)/i;

/**
 * Whether a statement may change what a cached read returns: anything but a
 * read, a transaction's control statement, a write to an uncached table, or
 * an update of only a use note. What it cannot tell (raw SQL) counts.
 */
function retiresCache(query: CompiledQuery): boolean {
  const node = query.query;
  if (node.kind === "SelectQueryNode") return false;
  if (node.kind === "RawNode") return !/^\s*select\b/i.test(query.sql) && !CONTROL.test(query.sql);
  const table =
    node.kind === "InsertQueryNode"
      ? nameOf((node as InsertQueryNode).into)
      : node.kind === "UpdateQueryNode"
        ? nameOf((node as UpdateQueryNode).table)
        : node.kind === "DeleteQueryNode"
          ? nameOf((node as DeleteQueryNode).from.froms[0])
          : null;
  if (table === null) return true;
  if (UNCACHED_TABLES.has(table)) return false;
  const note = USE_NOTES.get(table);
  const updates = node.kind === "UpdateQueryNode" ? (node as UpdateQueryNode).updates : undefined;
  if (note && updates?.length) {
    return !updates.every((update) => {
      const column = update.column as ColumnNode;
      return column.kind === "ColumnNode" && column.column.name === note;
    });
  }
  return true;
}

/**
 * A connection that counts each statement that may retire cached reads once
 * it has run, and the commit of a transaction that ran one; and notes each
 * such change that committed, to announce once the connection is released.
 */
class CountingConnection implements DatabaseConnection {
  private dirty = false;
  private inTransaction = false;
  /** A change committed on this connection and not yet announced. */
  unannounced = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly writes: WriteCount,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const counts = retiresCache(query);
    const raw = query.query.kind === "RawNode";
    try {
      const result = await this.inner.executeQuery<R>(query);
      if (counts ? !this.inTransaction : raw && this.dirty && COMMIT.test(query.sql)) this.unannounced = true;
      return result;
    } finally {
      if (counts) {
        this.writes.count += 1;
        this.dirty = this.inTransaction;
      } else if (raw && TRANSACTION_START.test(query.sql)) {
        this.inTransaction = true;
      } else if (raw && TRANSACTION_END.test(query.sql)) {
        if (this.dirty) this.writes.count += 1;
        this.dirty = false;
        this.inTransaction = false;
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection) =>
  connection instanceof CountingConnection ? connection.inner : connection;

const noSavepoints = () => Promise.reject(new Error("This dialect's driver has no savepoints."));

class CountingDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly writes: WriteCount,
  ) {}
  init = () => this.inner.init();
  destroy = () => this.inner.destroy();
  async acquireConnection(): Promise<DatabaseConnection> {
    return new CountingConnection(await this.inner.acquireConnection(), this.writes);
  }
  // Transaction statements go through the counting connection, so a commit counts once it is done.
  beginTransaction = (connection: DatabaseConnection, settings: TransactionSettings) =>
    this.inner.beginTransaction(connection, settings);
  commitTransaction = (connection: DatabaseConnection) => this.inner.commitTransaction(connection);
  rollbackTransaction = (connection: DatabaseConnection) => this.inner.rollbackTransaction(connection);
  /**
   * Gives the connection back first, then announces what committed on it: the
   * caller waits for the announcement (Kysely awaits the release before a
   * statement or `db.transaction().execute()` answers), the connection pool
   * does not. A controlled transaction (`startTransaction`) is released
   * without waiting, so the server's lint rules forbid it.
   */
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection(innerOf(connection));
    if (connection instanceof CountingConnection && connection.unannounced) {
      connection.unannounced = false;
      await this.writes.announce?.();
    }
  }
  // Both dialects' drivers have savepoints; one without them refuses, as Kysely would.
  savepoint: Driver["savepoint"] = (connection, name, compile) =>
    this.inner.savepoint?.(connection, name, compile) ?? noSavepoints();
  rollbackToSavepoint: Driver["rollbackToSavepoint"] = (connection, name, compile) =>
    this.inner.rollbackToSavepoint?.(connection, name, compile) ?? noSavepoints();
  releaseSavepoint: Driver["releaseSavepoint"] = (connection, name, compile) =>
    this.inner.releaseSavepoint?.(connection, name, compile) ?? noSavepoints();
}

/**
 * The dialect, counting this process's writes as they complete. PostgreSQL
 * tells the other processes about a change by a notification that arrives a
 * moment after the commit; the process that made the change must not wait
 * for it, so it retires its own cached reads by this count at once.
 */
export function countingWrites(dialect: Dialect, writes: WriteCount): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new CountingDriver(dialect.createDriver(), writes),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
