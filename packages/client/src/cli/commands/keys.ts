import { readFile } from "node:fs/promises";
import { addKey, listKeys, removeKey } from "../../keys.js";
import { stringOption, type Command } from "../command.js";
import { shortDate, table } from "../output.js";

export const keysList: Command = {
  name: "keys list",
  summary: "List your public SSH and GPG keys.",
  async run(ctx) {
    const keys = await listKeys({ connection: ctx.connection() });
    if (ctx.json) return ctx.printJson(keys);
    ctx.out(
      table(
        ["ID", "TITLE", "TYPE", "FINGERPRINT", "ADDED", "LAST USED"],
        keys.map((key) => [
          key.id,
          key.title,
          `${key.type} ${key.algorithm}`,
          key.fingerprint,
          shortDate(key.created_at),
          shortDate(key.last_used_at),
        ]),
      ),
    );
  },
};

export const keysAdd: Command = {
  name: "keys add",
  summary: "Add a public key from a file (e.g. ~/.ssh/id_ed25519.pub), or from stdin with -.",
  args: "FILE",
  positionals: { min: 1, max: 1 },
  options: { title: { type: "string" } },
  async run(ctx, values, [file = "-"]) {
    const key = (file === "-" ? await readAll(ctx.io.stdin) : await readFile(file, "utf8")).trim();
    const title = stringOption(values, "title");
    const added = await addKey({ connection: ctx.connection(), key, ...(title ? { title } : {}) });
    if (ctx.json) return ctx.printJson(added);
    ctx.out(`Added ${added.type} key ${added.fingerprint} (${added.id}).`);
  },
};

export const keysRemove: Command = {
  name: "keys remove",
  summary: "Remove a key by id; it stops working at once.",
  args: "ID",
  positionals: { min: 1, max: 1 },
  async run(ctx, _values, [keyId = ""]) {
    await removeKey({ connection: ctx.connection(), keyId });
    if (ctx.json) ctx.printJson({ removed: keyId });
    else ctx.out(`Removed key ${keyId}.`);
  },
};

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream as AsyncIterable<Buffer | string>) text += chunk.toString();
  return text;
}
