import { spawn } from "node:child_process";
import { discover, type DiscoveredHub } from "../../connection.js";
import { pollDeviceToken, startDeviceFlow } from "../../device-flow.js";
import { HubError } from "../../errors.js";
import { whoami } from "../../whoami.js";
import { stringOption, type Command } from "../command.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../usage-error.js";

/** Validates a token against the hub, then saves and selects it. */
async function saveToken(ctx: CliContext, token: string, name: string | undefined) {
  const connection = { endpoint: ctx.config.endpoint, token, userAgent: "hub-cli/1.0" };
  const who = await whoami({ connection });
  const saveAs = name ?? who.auth.accessToken?.displayName ?? "default";
  await ctx.config.store.save(saveAs, token, ctx.config.endpoint);
  if (ctx.json) ctx.printJson({ name: who.name, saved_as: saveAs, endpoint: ctx.config.endpoint });
  else
    ctx.out(`Logged in to ${ctx.config.endpoint} as ${who.name}; token saved as "${saveAs}" and selected.`);
}

/** Opens a URL in the desktop browser, if there is a desktop; failures are ignored (the URL is printed anyway). */
function openBrowser(url: string) {
  const opener =
    process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No browser to open: the person follows the printed URL.
  }
}

export const login: Command = {
  name: "login",
  summary: "Log in with the browser device flow (or save a token with --token) and select the token.",
  options: {
    token: { type: "string" },
    "token-stdin": { type: "boolean" },
    name: { type: "string" },
    scopes: { type: "string" },
    "no-browser": { type: "boolean" },
  },
  async run(ctx, values) {
    const name = stringOption(values, "name");
    let token = stringOption(values, "token");
    if (values["token-stdin"]) token = (await ctx.nextStdinLine())?.trim();
    if (token !== undefined) {
      if (!token) throw new UsageError("The token is empty.");
      return saveToken(ctx, token, name);
    }
    const connection = ctx.connection({ requireToken: false });
    const scopes = stringOption(values, "scopes")
      ?.split(/[,\s]+/)
      .filter(Boolean) ?? ["write"];
    const authorization = await startDeviceFlow({ connection, scopes });
    const url = authorization.verification_uri_complete;
    ctx.io.stderr.write(
      `Open ${authorization.verification_uri} in a browser and enter the code ${authorization.user_code}\n` +
        `(or open ${url})\nWaiting for approval...\n`,
    );
    if (
      !values["no-browser"] &&
      ctx.io.stderr.isTTY &&
      (process.env.DISPLAY || process.platform !== "linux")
    ) {
      openBrowser(url);
    }
    const granted = await pollDeviceToken({ connection, authorization });
    return saveToken(ctx, granted.access_token, name);
  },
};

export const logout: Command = {
  name: "logout",
  summary: "Forget the selected saved token (or the one named).",
  args: "[NAME]",
  positionals: { min: 0, max: 1 },
  async run(ctx, _values, [name]) {
    const removed = await ctx.config.store.remove(name);
    if (removed === null) {
      throw new HubError(
        0,
        name ? `No saved token is named "${name}".` : "No token is selected; nothing to forget.",
        {
          code: "token_not_saved",
        },
      );
    }
    if (ctx.json) ctx.printJson({ removed });
    else ctx.out(`Forgot the saved token "${removed}".`);
    if (ctx.config.tokenSource === "SERVICE_TOKEN") ctx.note("SERVICE_TOKEN is still set and still used.");
  },
};

export const whoamiCommand: Command = {
  name: "whoami",
  summary: "Show the account and token in use.",
  async run(ctx) {
    const who = await whoami({ connection: ctx.connection() });
    if (ctx.json) return ctx.printJson(who);
    ctx.out(who.name);
    const token = who.auth.accessToken;
    if (token) {
      ctx.out(
        `token: ${token.displayName} (${token.kind === "fine-grained" ? token.scopes.join(", ") : `role ${token.role}`})`,
      );
    }
    if (who.orgs.length > 0)
      ctx.out(`orgs: ${who.orgs.map((org) => `${org.name} (${org.roleInOrg})`).join(", ")}`);
  },
};

/** The first characters of a token, enough to recognise it and useless to anyone else. */
const tokenHint = (token: string) => `${token.slice(0, Math.min(7, Math.floor(token.length / 4)))}…`;

export const env: Command = {
  name: "env",
  summary: "Print the effective configuration (never the token itself).",
  async run(ctx) {
    const { config } = ctx;
    let discovered: DiscoveredHub | { error: string };
    try {
      discovered = await discover(ctx.connection({ requireToken: false }));
    } catch (err) {
      discovered = { error: err instanceof Error ? err.message : String(err) };
    }
    const settings = {
      endpoint: config.endpoint,
      endpoint_source: config.endpointSource,
      home: config.home,
      home_source: config.homeSource,
      cache_dir: config.cacheDir,
      token_file: config.store.file,
      token_source: config.tokenSource,
      token_name: config.tokenName ?? null,
      token_hint: config.token ? tokenHint(config.token) : null,
      debug: config.debug,
      hub: discovered,
      client_version: "1.0.0",
      node_version: process.version,
    };
    if (ctx.json) return ctx.printJson(settings);
    const hub = "error" in discovered ? { unreachable: discovered.error } : discovered;
    const lines: Array<[string, unknown]> = [
      ["endpoint", `${settings.endpoint} (${settings.endpoint_source})`],
      ["home", `${settings.home} (${settings.home_source})`],
      ["cache", settings.cache_dir],
      ["token file", settings.token_file],
      [
        "token",
        config.token
          ? `${settings.token_hint} from ${config.tokenSource === "SERVICE_TOKEN" ? "SERVICE_TOKEN" : `saved token "${config.tokenName}"`}`
          : "none (run hub login)",
      ],
      ["debug", settings.debug ? "on (SERVICE_DEBUG)" : "off"],
      ...Object.entries(hub).map(([key, value]): [string, unknown] => [
        `hub ${key}`,
        Array.isArray(value) ? value.join(" ") : value,
      ]),
      ["client", `hub-cli ${settings.client_version}, node ${settings.node_version}`],
    ];
    const width = Math.max(...lines.map(([key]) => key.length));
    for (const [key, value] of lines) ctx.out(`${key.padEnd(width)}  ${String(value)}`);
  },
};
