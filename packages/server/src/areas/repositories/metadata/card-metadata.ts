import { parse } from "yaml";

/**
 * What a repository card (README.md) says about its repository: the YAML
 * front matter between its leading `---` lines, the fields listings filter on
 * read from it, what is wrong with it (as the Hugging Face Hub's
 * `validate-yaml` reports), and its text for full-text search. Reading never
 * throws: a card with invalid YAML is indexed without metadata and says why.
 */

export const BASE_MODEL_RELATIONS = ["adapter", "merge", "quantized", "finetune"] as const;
export type BaseModelRelation = (typeof BASE_MODEL_RELATIONS)[number];

export interface CardMetadata {
  /** The front matter as the card wrote it; null without one or when it is not a YAML mapping. */
  data: Record<string, unknown> | null;
  /** What is wrong with the front matter, one sentence per problem; empty when nothing is. */
  problems: string[];
  /** The card below its front matter. */
  text: string;
  pipelineTag: string | null;
  libraryName: string | null;
  license: string | null;
  tags: string[];
  languages: string[];
  datasets: string[];
  /** Models a Space's card says it uses. */
  models: string[];
  baseModels: string[];
  /** How the card says the repository derives from its base models; null when it does not say. */
  baseModelRelation: BaseModelRelation | null;
}

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|$)/;
/** Tags as the ecosystem writes them: a word, `key:value` or a repository id. */
const TAG = /^[\p{L}\p{N}][\p{L}\p{N}:._/+ -]{0,99}$/u;
const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_LIST = 100;

/** A string field, or a problem when it is something else. */
function stringField(data: Record<string, unknown>, name: string, problems: string[]): string | null {
  const value = data[name];
  if (value === undefined || value === null) return null;
  if (typeof value === "string" && value.trim() !== "") return value.trim();
  problems.push(`"${name}" must be a string.`);
  return null;
}

/** A list of strings (a single string counts as a list of one), or a problem when it is something else. */
function listField(
  data: Record<string, unknown>,
  name: string,
  problems: string[],
  valid: (item: string) => boolean = (item) => TAG.test(item),
): string[] {
  const value = data[name];
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const kept: string[] = [];
  for (const item of items) {
    if (typeof item !== "string" || !valid(item.trim())) {
      problems.push(
        `"${name}" must be a list of strings; ${JSON.stringify(item)} is not one that can be used.`,
      );
      continue;
    }
    kept.push(item.trim());
  }
  return [...new Set(kept)].slice(0, MAX_LIST);
}

/** Reads a card. `text` is the README's content; null when the repository has none. */
export function readCard(text: string | null): CardMetadata {
  const empty: CardMetadata = {
    data: null,
    problems: [],
    text: text ?? "",
    pipelineTag: null,
    libraryName: null,
    license: null,
    tags: [],
    languages: [],
    datasets: [],
    models: [],
    baseModels: [],
    baseModelRelation: null,
  };
  if (text === null) return empty;
  const match = FRONT_MATTER.exec(text);
  if (!match) return empty;
  const body = text.slice(match[0].length);
  let parsed: unknown;
  try {
    parsed = parse(match[1] ?? "", { maxAliasCount: 10, uniqueKeys: true });
  } catch (err) {
    const reason = (err as Error).message.split("\n")[0];
    return { ...empty, text: body, problems: [`The YAML front matter is invalid: ${reason}`] };
  }
  if (parsed === null || parsed === undefined) return { ...empty, text: body };
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ...empty, text: body, problems: ["The YAML front matter must be a mapping of fields."] };
  }
  const data = parsed as Record<string, unknown>;
  const problems: string[] = [];
  const baseModels = listField(data, "base_model", problems, (item) => REPO_ID.test(item));
  const relationValue = stringField(data, "base_model_relation", problems);
  let baseModelRelation: BaseModelRelation | null = null;
  if (relationValue !== null) {
    if ((BASE_MODEL_RELATIONS as readonly string[]).includes(relationValue)) {
      baseModelRelation = relationValue as BaseModelRelation;
    } else {
      problems.push(`"base_model_relation" must be one of ${BASE_MODEL_RELATIONS.join(", ")}.`);
    }
  }
  const tags = listField(data, "tags", problems);
  const modelIndex = data["model-index"];
  if (modelIndex !== undefined && modelIndex !== null && !Array.isArray(modelIndex)) {
    problems.push(`"model-index" must be a list of models with their results.`);
  }
  return {
    data,
    problems,
    text: body,
    pipelineTag: stringField(data, "pipeline_tag", problems),
    libraryName: stringField(data, "library_name", problems),
    license: stringField(data, "license", problems),
    tags,
    languages: listField(data, "language", problems),
    datasets: listField(data, "datasets", problems),
    models: listField(data, "models", problems),
    baseModels,
    baseModelRelation: baseModels.length > 0 ? baseModelRelation : null,
  };
}

/**
 * How a repository whose card names base models without `base_model_relation`
 * derives from them, as the Hugging Face Hub guesses it from its tags (the
 * card's, its library's and its files'): several bases make a merge, an
 * adapter library an adapter, a quantized format a quantization, anything
 * else a fine-tune.
 */
export function inferRelation(baseModels: string[], tags: string[]): BaseModelRelation {
  const lower = tags.map((tag) => tag.toLowerCase());
  if (baseModels.length > 1 || lower.includes("merge") || lower.includes("mergekit")) return "merge";
  if (lower.some((tag) => ["peft", "lora", "adapter"].includes(tag))) return "adapter";
  if (lower.some((tag) => ["gguf", "gptq", "awq", "quantized", "exl2", "bitsandbytes"].includes(tag)))
    return "quantized";
  return "finetune";
}
