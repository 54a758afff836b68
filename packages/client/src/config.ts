import os from "node:os";
import path from "node:path";
import { TokenStore } from "./token-store.js";

/** The hub address used when nothing else names one: a hub started with its defaults on this machine. */
export const DEFAULT_ENDPOINT = "http://127.0.0.1:8080";

/** The client's effective configuration, and where each part came from. */
export interface ClientConfig {
  endpoint: string;
  endpointSource: "SERVICE_ENDPOINT" | "saved token" | "default";
  /** The configuration and cache root. */
  home: string;
  homeSource: "SERVICE_HOME" | "default";
  /** The download cache, laid out like the Hugging Face cache. */
  cacheDir: string;
  token: string | undefined;
  tokenSource: "SERVICE_TOKEN" | "saved token" | "none";
  /** The name of the saved token in use. */
  tokenName: string | undefined;
  /** `SERVICE_DEBUG=1`: full tracebacks and request ids on errors. */
  debug: boolean;
  store: TokenStore;
}

/**
 * The default configuration root: `$XDG_CACHE_HOME/hub`, else `~/.cache/hub`
 * (as the Hugging Face clients use `~/.cache/huggingface`).
 */
export function defaultHome(env: NodeJS.ProcessEnv): string {
  const cache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(cache, "hub");
}

/**
 * Reads the client's configuration: the only place the client reads the
 * environment (spec, Authentication 9). `SERVICE_TOKEN` overrides the selected
 * saved token; `SERVICE_ENDPOINT` overrides the saved token's hub and the
 * default; `SERVICE_HOME` moves the root; `SERVICE_DEBUG=1` turns on tracebacks.
 */
export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<ClientConfig> {
  const home = env.SERVICE_HOME ? path.resolve(env.SERVICE_HOME) : defaultHome(env);
  const store = new TokenStore(home);
  const selected = await store.selected();
  const envEndpoint = env.SERVICE_ENDPOINT?.trim();
  const envToken = env.SERVICE_TOKEN?.trim();
  const endpoint = (envEndpoint || selected?.saved.endpoint || DEFAULT_ENDPOINT).replace(/\/+$/, "");
  return {
    endpoint,
    endpointSource: envEndpoint ? "SERVICE_ENDPOINT" : selected ? "saved token" : "default",
    home,
    homeSource: env.SERVICE_HOME ? "SERVICE_HOME" : "default",
    cacheDir: path.join(home, "hub"),
    token: envToken || selected?.saved.token,
    tokenSource: envToken ? "SERVICE_TOKEN" : selected ? "saved token" : "none",
    tokenName: envToken ? undefined : selected?.name,
    debug: env.SERVICE_DEBUG === "1" || env.SERVICE_DEBUG === "true",
    store,
  };
}
