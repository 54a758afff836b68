import { sql } from "kysely";
import type { DatabaseConfig } from "../config.js";
import type { DbOrTx } from "./database.js";

/** A column whose foreign key points at a table, and what deleting the pointed-at row does to its row. */
export interface ForeignKeyReference {
  table: string;
  column: string;
  /** `cascade`, `set null`, `set default`, `restrict` or `no action`. */
  onDelete: string;
}

/**
 * Every foreign key of the live schema that points at `target`, read from the
 * catalog of either dialect: tables other branches add later are found
 * without being named anywhere.
 */
export async function foreignKeysTo(
  db: DbOrTx,
  dialect: DatabaseConfig["dialect"],
  target: string,
): Promise<ForeignKeyReference[]> {
  const query =
    dialect === "sqlite"
      ? sql<ForeignKeyReference>`
          select m.name as "table", f."from" as "column", lower(f.on_delete) as "onDelete"
          from sqlite_master as m, pragma_foreign_key_list(m.name) as f
          where m.type = 'table' and f."table" = ${target}
          order by 1, 2`
      : sql<ForeignKeyReference>`
          select cl.relname as "table", att.attname as "column",
            case con.confdeltype when 'c' then 'cascade' when 'n' then 'set null'
              when 'd' then 'set default' when 'r' then 'restrict' else 'no action' end as "onDelete"
          from pg_constraint con
          join pg_class cl on cl.oid = con.conrelid
          join pg_class ref on ref.oid = con.confrelid
          join pg_namespace ns on ns.oid = cl.relnamespace
          join lateral unnest(con.conkey) as k(attnum) on true
          join pg_attribute att on att.attrelid = con.conrelid and att.attnum = k.attnum
          where con.contype = 'f' and ref.relname = ${target} and ns.nspname = current_schema()
          order by 1, 2`;
  return (await query.execute(db)).rows;
}
