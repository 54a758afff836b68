import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from "kysely";

/** How many statements other than reads this process has run, commits included. */
export interface WriteCount {
  count: number;
}

function isRead(query: CompiledQuery): boolean {
  return query.query.kind === "SelectQueryNode" || /^\s*select\b/i.test(query.sql);
}

/** A connection that counts every statement but reads once it has run (a commit is one). */
class CountingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly writes: WriteCount,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } finally {
      if (!isRead(query)) this.writes.count += 1;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection) =>
  connection instanceof CountingConnection ? connection.inner : connection;

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
  releaseConnection = (connection: DatabaseConnection) => this.inner.releaseConnection(innerOf(connection));
  savepoint: Driver["savepoint"] = (connection, name, compile) =>
    this.inner.savepoint?.(connection, name, compile) ?? Promise.resolve();
  rollbackToSavepoint: Driver["rollbackToSavepoint"] = (connection, name, compile) =>
    this.inner.rollbackToSavepoint?.(connection, name, compile) ?? Promise.resolve();
  releaseSavepoint: Driver["releaseSavepoint"] = (connection, name, compile) =>
    this.inner.releaseSavepoint?.(connection, name, compile) ?? Promise.resolve();
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
