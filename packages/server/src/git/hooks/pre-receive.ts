/**
 * git's pre-receive hook for every push (https://git-scm.com/docs/githooks#pre-receive).
 * It runs inside receive-pack with the pushed objects still in quarantine, and
 * refuses the whole push, with a message git prints to the user, when a ref
 * is not a branch or tag, or when a file over the size limit is not in Git LFS.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const ZERO = /^0+$/;
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const limit = Number(process.env.HUB_MAX_GIT_BLOB_BYTES ?? 10 * 1024 * 1024);

function git(args: string[], input = ""): string {
  const result = spawnSync("git", args, { input, encoding: "utf8", maxBuffer: 1024 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`git ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Why a ref may not be pushed, or null when it may. */
function refProblem(ref: string): string | null {
  if (ref.startsWith("refs/pr/")) {
    return `${ref}: refs/pr/* belong to pull requests; push a branch and open a pull request instead.`;
  }
  const match = /^refs\/(heads|tags)\/(.+)$/.exec(ref);
  if (!match) return `${ref}: only branches (refs/heads/*) and tags (refs/tags/*) can be pushed.`;
  if (match[2]?.startsWith("-"))
    return `${ref}: names may not start with "-"; rename the ${match[1] === "heads" ? "branch" : "tag"}.`;
  return null;
}

/** Files over the limit among the objects this push adds. */
function oversizedFiles(newSha: string): Array<{ path: string; size: number }> {
  const objects = git(["rev-list", "--objects", newSha, "--not", "--all"])
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const space = line.indexOf(" ");
      return space < 0 ? { sha: line, path: "" } : { sha: line.slice(0, space), path: line.slice(space + 1) };
    });
  if (objects.length === 0) return [];
  const sizes = git(
    ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
    objects.map((o) => o.sha).join("\n") + "\n",
  )
    .split("\n")
    .filter(Boolean);
  const oversized: Array<{ path: string; size: number }> = [];
  sizes.forEach((line, index) => {
    const [, type, size] = line.split(" ");
    if (type === "blob" && Number(size) > limit)
      oversized.push({ path: objects[index]?.path ?? "", size: Number(size) });
  });
  return oversized;
}

function main(): number {
  const problems: string[] = [];
  for (const line of readFileSync(0, "utf8").split("\n").filter(Boolean)) {
    const [oldSha = "", newSha = "", ref = ""] = line.split(" ");
    if (!SHA.test(oldSha) || !SHA.test(newSha)) return fail([`malformed update "${line}"`]);
    const problem = refProblem(ref);
    if (problem) {
      problems.push(problem);
      continue;
    }
    if (ZERO.test(newSha)) continue;
    for (const file of oversizedFiles(newSha)) {
      problems.push(
        `${file.path} is ${mebibytes(file.size)} (ref ${ref}); files over ${mebibytes(limit)} must be stored with Git LFS: ` +
          `run git lfs track "${file.path}", then git add and commit it again.`,
      );
    }
  }
  return problems.length ? fail(problems) : 0;
}

function fail(problems: string[]): number {
  process.stderr.write(`Your push was rejected:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  return 1;
}

try {
  process.exitCode = main();
} catch (err) {
  process.stderr.write(`The hub could not check this push: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
