import { CompiledQuery, type Compilable } from "kysely";
import type { DbOrTx } from "./database.js";

/**
 * A query built and compiled by Kysely once, then run with new arguments.
 * Building and compiling cost more than SQLite's own work for the small hot
 * queries (token lookup, memberships), so those are compiled once per process.
 * The builder is called with unique placeholder strings; each placeholder's
 * position among the compiled parameters says where each argument goes.
 */
export function preparedQuery<Row, Args extends string[]>(
  build: (db: DbOrTx, ...args: Args) => Compilable<Row>,
  arity: Args["length"],
) {
  const compiled = new WeakMap<object, { sql: string; slots: Array<number | { constant: unknown }> }>();
  return async (db: DbOrTx, ...args: Args): Promise<Row[]> => {
    let plan = compiled.get(db);
    if (!plan) {
      const placeholders = Array.from(
        { length: arity },
        (_, i) => `\u0000prepared-argument-${i}\u0000`,
      ) as Args;
      const query = build(db, ...placeholders).compile();
      const slots = query.parameters.map((parameter) => {
        const index = placeholders.indexOf(parameter as string);
        return index >= 0 ? index : { constant: parameter };
      });
      plan = { sql: query.sql, slots };
      compiled.set(db, plan);
    }
    const parameters = plan.slots.map((slot) => (typeof slot === "number" ? args[slot] : slot.constant));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(plan.sql, parameters));
    return result.rows;
  };
}
