import { REPO_TYPES, type RepoType } from "@hub/api";
import { ConflictError } from "../../errors.js";
import { createRepo, deleteRepo, listRepos, parseRepo, repoInfo, type RepoRef } from "../../repos.js";
import { stringOption, type Command, type OptionValues } from "../command.js";
import { shortDate, table } from "../output.js";
import { UsageError } from "../usage-error.js";

/** `--type`, checked. */
export function repoType(values: OptionValues): RepoType | undefined {
  const type = stringOption(values, "type");
  if (type === undefined) return undefined;
  if (!(REPO_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--type is one of ${REPO_TYPES.join(", ")}.`);
  }
  return type as RepoType;
}

/** The REPO argument with `--type`. */
export function repoArgument(value: string | undefined, values: OptionValues): RepoRef {
  if (!value) throw new UsageError("Name the repository as owner/name.");
  try {
    return parseRepo(value, repoType(values));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export const repoCreate: Command = {
  name: "repo create",
  summary: "Create a repository.",
  args: "REPO",
  positionals: { min: 1, max: 1 },
  options: { type: { type: "string" }, private: { type: "boolean" }, "exist-ok": { type: "boolean" } },
  async run(ctx, values, [name]) {
    const repo = repoArgument(name, values);
    try {
      const created = await createRepo({
        connection: ctx.connection(),
        repo,
        private: values.private === true,
      });
      if (ctx.json) return ctx.printJson(created);
      ctx.out(created.url);
      ctx.note(
        `Created ${created.private ? "private" : "public"} ${created.type} ${created.id}; clone it with git clone ${created.git_url}`,
      );
    } catch (err) {
      if (!(err instanceof ConflictError) || !values["exist-ok"]) throw err;
      ctx.note(`${repo.name} exists already.`);
      if (ctx.json) ctx.printJson({ id: repo.name, type: repo.type, existed: true });
    }
  },
};

export const repoDelete: Command = {
  name: "repo delete",
  summary: "Delete a repository permanently (needs --yes).",
  args: "REPO",
  positionals: { min: 1, max: 1 },
  options: { type: { type: "string" }, yes: { type: "boolean" } },
  async run(ctx, values, [name]) {
    const repo = repoArgument(name, values);
    if (!values.yes) throw new UsageError(`Deleting ${repo.name} cannot be undone: add --yes to confirm.`);
    await deleteRepo({ connection: ctx.connection(), repo });
    if (ctx.json) ctx.printJson({ deleted: repo.name, type: repo.type });
    else ctx.out(`Deleted ${repo.type} ${repo.name}.`);
  },
};

export const repoInfoCommand: Command = {
  name: "repo info",
  summary: "Show a repository: its commit, visibility and files.",
  args: "REPO",
  positionals: { min: 1, max: 1 },
  options: { type: { type: "string" }, revision: { type: "string" } },
  async run(ctx, values, [name]) {
    const repo = repoArgument(name, values);
    const revision = stringOption(values, "revision");
    const info = await repoInfo({ connection: ctx.connection(), repo, ...(revision ? { revision } : {}) });
    if (ctx.json) return ctx.printJson(info);
    ctx.out(
      [
        `id: ${info.id}`,
        `type: ${info.type}`,
        `private: ${info.private}`,
        `commit: ${info.sha ?? "none"}`,
        `created: ${shortDate(info.createdAt)}`,
        `modified: ${shortDate(info.lastModified)}`,
        `files (${info.siblings.length}):`,
        ...info.siblings.map((file) => `  ${file.rfilename}`),
      ].join("\n"),
    );
  },
};

export const repoList: Command = {
  name: "repo list",
  summary: "List the repositories you may read.",
  options: {
    type: { type: "string" },
    author: { type: "string" },
    search: { type: "string" },
    limit: { type: "string" },
  },
  async run(ctx, values) {
    const limitText = stringOption(values, "limit");
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
      throw new UsageError("--limit is a whole number.");
    const items = [];
    for await (const item of listRepos({
      connection: ctx.connection({ requireToken: false }),
      type: repoType(values) ?? "model",
      ...(stringOption(values, "author") ? { author: stringOption(values, "author") } : {}),
      ...(stringOption(values, "search") ? { search: stringOption(values, "search") } : {}),
      ...(limit ? { limit } : {}),
    }))
      items.push(item);
    if (ctx.json) return ctx.printJson(items);
    ctx.out(
      table(
        ["ID", "PRIVATE", "MODIFIED"],
        items.map((item) => [item.id, item.private ? "yes" : "no", shortDate(item.lastModified)]),
      ),
    );
  },
};
