import { SCOPES, type CreateTokenRequest, type Scope, type TokenMetadata } from "@hub/api";
import { HubError } from "../../errors.js";
import { createToken, listTokens, revokeToken } from "../../tokens.js";
import { stringOption, type Command } from "../command.js";
import type { CliContext } from "../context.js";
import { shortDate, table } from "../output.js";
import { UsageError } from "../usage-error.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `30d`, `12h`, `90m`, `1y` as milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)([mhdwy])$/.exec(value.trim());
  if (!match) throw new UsageError(`"${value}" is not a duration: write it like 30d, 12h, 2w or 1y.`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 }[match[2] as "m"];
  return Number(match[1]) * unit;
}

async function accountTokens(ctx: CliContext): Promise<TokenMetadata[]> {
  const connection = ctx.connection();
  return ctx.withReauthentication(connection, () => listTokens({ connection }));
}

export const tokenList: Command = {
  name: "token list",
  summary:
    "List the account's tokens (asks for the password when the hub wants it); --saved lists this machine's.",
  options: { saved: { type: "boolean" }, "password-stdin": { type: "boolean" } },
  async run(ctx, values) {
    if (values.saved) {
      const file = await ctx.config.store.read();
      const saved = Object.entries(file.tokens).map(([name, token]) => ({
        name,
        selected: name === file.selected,
        endpoint: token.endpoint,
        saved_at: token.savedAt,
      }));
      if (ctx.json) return ctx.printJson(saved);
      return ctx.out(
        table(
          ["", "NAME", "ENDPOINT", "SAVED"],
          saved.map((t) => [t.selected ? "*" : "", t.name, t.endpoint, shortDate(t.saved_at)]),
        ),
      );
    }
    const tokens = await accountTokens(ctx);
    if (ctx.json) return ctx.printJson(tokens);
    ctx.out(
      table(
        ["NAME", "ID", "PREFIX", "ACCESS", "EXPIRES", "LAST USED"],
        tokens.map((t) => [
          t.name,
          t.token_id,
          t.token_prefix,
          t.kind === "fine-grained" ? t.scopes.join(",") : t.role,
          shortDate(t.expires_at),
          shortDate(t.last_used_at),
        ]),
      ),
    );
  },
};

export const tokenCreate: Command = {
  name: "token create",
  summary: "Create a token and print its secret once (asks for the password when the hub wants it).",
  args: "NAME",
  positionals: { min: 1, max: 1 },
  options: {
    role: { type: "string" },
    scopes: { type: "string" },
    "expires-in": { type: "string" },
    org: { type: "string" },
    repos: { type: "string" },
    save: { type: "boolean" },
    "password-stdin": { type: "boolean" },
  },
  async run(ctx, values, [name = ""]) {
    const role = stringOption(values, "role");
    const scopes = stringOption(values, "scopes")
      ?.split(",")
      .map((scope) => scope.trim());
    if ((role === undefined) === (scopes === undefined))
      throw new UsageError("Give exactly one of --role or --scopes.");
    if (role !== undefined && role !== "read" && role !== "write")
      throw new UsageError("--role is read or write.");
    for (const scope of scopes ?? []) {
      if (!(SCOPES as readonly string[]).includes(scope)) {
        throw new UsageError(`Unknown scope "${scope}"; the scopes are ${SCOPES.join(", ")}.`);
      }
    }
    const request: CreateTokenRequest = {
      name,
      expires_at: new Date(
        Date.now() + parseDuration(stringOption(values, "expires-in") ?? "30d"),
      ).toISOString(),
      ...(role ? { role } : { scopes: scopes as Scope[] }),
      ...(stringOption(values, "org") ? { organization: stringOption(values, "org") } : {}),
      ...(stringOption(values, "repos") ? { repositories: stringOption(values, "repos")?.split(",") } : {}),
    };
    const connection = ctx.connection();
    const created = await ctx.withReauthentication(connection, () =>
      createToken({ connection, token: request }),
    );
    if (values.save) await ctx.config.store.save(name, created.token, ctx.config.endpoint);
    if (ctx.json) return ctx.printJson(created);
    ctx.note(
      `Created token "${created.name}" (${created.token_id}), expiring ${shortDate(created.expires_at)}.` +
        (values.save ? ` Saved as "${name}" and selected.` : " Copy the secret now: it is not shown again."),
    );
    ctx.out(created.token);
  },
};

export const tokenRevoke: Command = {
  name: "token revoke",
  summary: "Revoke a token by id (or by name, which lists the tokens first).",
  args: "ID_OR_NAME",
  positionals: { min: 1, max: 1 },
  options: { "password-stdin": { type: "boolean" } },
  async run(ctx, _values, [target = ""]) {
    let tokenId = target;
    if (!UUID.test(target)) {
      const matches = (await accountTokens(ctx)).filter((token) => token.name === target);
      if (matches.length !== 1) {
        throw new HubError(
          404,
          matches.length === 0
            ? `No token is named "${target}".`
            : `Several tokens are named "${target}"; give the id.`,
          {
            code: matches.length === 0 ? "token_not_found" : "token_ambiguous",
          },
        );
      }
      tokenId = matches[0]?.token_id ?? "";
    }
    await revokeToken({ connection: ctx.connection(), tokenId });
    if (ctx.json) ctx.printJson({ revoked: tokenId });
    else ctx.out(`Revoked token ${tokenId}.`);
  },
};

export const tokenUse: Command = {
  name: "token use",
  summary: "Select one of the tokens saved on this machine.",
  args: "NAME",
  positionals: { min: 1, max: 1 },
  async run(ctx, _values, [name = ""]) {
    if (!(await ctx.config.store.use(name))) {
      const saved = Object.keys((await ctx.config.store.read()).tokens);
      throw new HubError(
        0,
        `No saved token is named "${name}"${saved.length ? `; saved: ${saved.join(", ")}` : ""}.`,
        {
          code: "token_not_saved",
        },
      );
    }
    if (ctx.json) ctx.printJson({ selected: name });
    else ctx.out(`Selected the saved token "${name}".`);
    if (ctx.config.tokenSource === "SERVICE_TOKEN") ctx.note("SERVICE_TOKEN is set and overrides it.");
  },
};
