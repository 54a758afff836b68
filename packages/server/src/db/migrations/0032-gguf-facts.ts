import type { Kysely, Migration } from "kysely";

/**
 * What the header of a repository's first GGUF file says (parameters, architecture, context length, chat
 * template, BOS and EOS tokens), as JSON: `gguf` in info and listings. Repositories indexed before keep
 * null until their next push, and report `gguf: {total: null}` as they did.
 */
export const ggufFacts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("repo_metadata").addColumn("gguf_facts", "text").execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("repo_metadata").dropColumn("gguf_facts").execute();
  },
};
