import { readFileSync } from "node:fs";
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import YAML from "yaml";

/** The tasks the Router serves, one per endpoint. */
export const TASKS = ["chat", "responses", "embeddings"] as const;
export type Task = (typeof TASKS)[number];

/** The Router endpoint that serves each task. */
export const TASK_ENDPOINTS: Readonly<Record<Task, string>> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  embeddings: "/v1/embeddings",
};

/** Words a provider slug may not take: they are the policy suffixes of a model id. */
export const POLICIES = ["fastest", "cheapest", "preferred"] as const;
export type Policy = (typeof POLICIES)[number];

const ModelMapping = Type.Object(
  {
    id: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$", maxLength: 200 }),
    providerModel: Type.String({ minLength: 1, maxLength: 256 }),
    task: Type.Union(TASKS.map((task) => Type.Literal(task))),
    pricing: Type.Object(
      {
        input: Type.Number({ minimum: 0, description: "USD per million input tokens." }),
        output: Type.Number({ minimum: 0, description: "USD per million output tokens." }),
      },
      { additionalProperties: false },
    ),
    contextLength: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

const ProviderEntry = Type.Object(
  {
    slug: Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    baseUrl: Type.String({ pattern: "^https?://" }),
    apiKey: Type.String({ minLength: 1 }),
    adapter: Type.Optional(Type.Literal("openai")),
    models: Type.Array(ModelMapping),
  },
  { additionalProperties: false },
);

/** The operator's provider file (`HUB_PROVIDERS`, JSON or YAML). */
export const ProvidersFile = Type.Object(
  { providers: Type.Array(ProviderEntry) },
  { additionalProperties: false },
);
type ProvidersFile = Static<typeof ProvidersFile>;
export type ModelMapping = Static<typeof ModelMapping>;

/** A provider as the Router uses it, with its key resolved. */
export interface ProviderConfig {
  slug: string;
  name: string;
  baseUrl: string;
  apiKey: string;
  adapter: "openai";
  models: ModelMapping[];
}

/** A provider file the hub cannot use; the message names the file and the fault. */
export class ProvidersFileError extends Error {}

function resolveKey(raw: string, env: Record<string, string | undefined>, where: string): string {
  if (!raw.startsWith("env:")) return raw;
  const name = raw.slice(4);
  const value = env[name];
  if (!value) throw new ProvidersFileError(`${where}: apiKey names the variable ${name}, which is not set.`);
  return value;
}

/** Reads, validates and resolves the provider file; every fault is reported with where it is. */
export function loadProvidersFile(file: string, env: Record<string, string | undefined>): ProviderConfig[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ProvidersFileError(`HUB_PROVIDERS: cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = /\.json$/i.test(file) ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new ProvidersFileError(`${file} is not valid JSON or YAML: ${(err as Error).message}`);
  }
  const first = Value.Errors(ProvidersFile, parsed).First();
  if (first) {
    throw new ProvidersFileError(`${file}: ${first.path || "(root)"} ${first.message}.`);
  }
  const providers = (parsed as ProvidersFile).providers;
  const seen = new Set<string>();
  return providers.map((entry, index) => {
    const where = `${file}: providers[${index}] (${entry.slug})`;
    if (seen.has(entry.slug)) throw new ProvidersFileError(`${where}: the slug is used twice.`);
    if ((POLICIES as readonly string[]).includes(entry.slug)) {
      throw new ProvidersFileError(
        `${where}: "${entry.slug}" is a routing policy name; choose another slug.`,
      );
    }
    seen.add(entry.slug);
    const mappings = new Set<string>();
    for (const model of entry.models) {
      const key = `${model.id} ${model.task}`;
      if (mappings.has(key)) {
        throw new ProvidersFileError(`${where}: ${model.id} is mapped twice for the ${model.task} task.`);
      }
      mappings.add(key);
    }
    return {
      slug: entry.slug,
      name: entry.name ?? entry.slug,
      baseUrl: entry.baseUrl.replace(/\/+$/, ""),
      apiKey: resolveKey(entry.apiKey, env, where),
      adapter: entry.adapter ?? "openai",
      models: entry.models,
    };
  });
}
