/**
 * What git's own checks refuse in a tree, applied before the hub writes one, so
 * a commit made through the API can never hold what `git push` would refuse
 * under `receive.fsckObjects` (and every later push with it). The rules follow
 * git's `verify_path` and `fsck_tree` (fsck.c, path.c, utf8.c): `.git` in any
 * spelling HFS+ or NTFS folds to, `.`/`..`/empty components, backslashes
 * (directory separators on NTFS), and aliases of `.gitmodules`,
 * `.gitattributes` and `.gitignore` whose contents git would check or trust.
 */

/** Code points HFS+ ignores when it compares names (git's `next_hfs_char`). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/** The longest path the hub stores; git itself allows longer, file systems often do not. */
export const MAX_PATH_LENGTH = 1024;

/** The longest line git accepts in a `.gitattributes` file (fsck's gitattributesLineLength). */
export const MAX_GITATTRIBUTES_LINE = 2048;

/** A component as HFS+ compares it: ignorable code points dropped, case folded. */
function hfsFolded(component: string): string {
  return component.replace(HFS_IGNORED, "").toLowerCase();
}

/**
 * Whether NTFS would open `name` for this component: the name or its 8.3 short
 * form, then only spaces and periods up to the end or an alternate data
 * stream (`:`). `shortForms` are the `~N` names git knows for it.
 */
function ntfsIs(component: string, name: string, shortForms: RegExp): boolean {
  const head = component.split(/[:\\]/, 1)[0] ?? "";
  const trimmed = head.replace(/[. ]+$/, "").toLowerCase();
  return trimmed === name || shortForms.test(trimmed);
}

const DOT_GIT_SHORT = /^git~1$/;
const SPECIAL_FILES = {
  ".gitmodules": /^(gitmod~[1-4]|gi7eba~[1-9])$/,
  ".gitattributes": /^(gitatt~[1-4]|gi7d29~[1-9])$/,
  ".gitignore": /^(gitign~[1-4]|gi250a~[1-9])$/,
} as const;
export type SpecialFile = keyof typeof SPECIAL_FILES;

/** Whether a component is `.git` as git's `is_hfs_dotgit` or `is_ntfs_dotgit` sees it. */
export function isDotGit(component: string): boolean {
  return hfsFolded(component) === ".git" || ntfsIs(component, ".git", DOT_GIT_SHORT);
}

/** Which special file a component names, in any spelling HFS+ or NTFS folds to it, or null. */
export function specialFileOf(component: string): SpecialFile | null {
  for (const [name, shortForms] of Object.entries(SPECIAL_FILES) as Array<[SpecialFile, RegExp]>) {
    if (hfsFolded(component) === name || ntfsIs(component, name, shortForms)) return name;
  }
  return null;
}

/**
 * Why git would refuse this repository path, or null when it is fine. The
 * reason is a sentence for the person who sent it.
 */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return "the path is empty";
  if (path.length > MAX_PATH_LENGTH) return `the path is longer than ${MAX_PATH_LENGTH} characters`;
  if (path.includes("\0")) return "the path contains a NUL character";
  if (path.startsWith("/")) return "the path is absolute; use a path relative to the repository root";
  if (path.includes("\\"))
    return 'the path contains a backslash, which NTFS treats as a folder separator; use "/"';
  for (const component of path.split("/")) {
    if (component === "") return "the path has an empty segment (a doubled or trailing /)";
    if (component === "." || component === "..") return `the path has a "${component}" segment`;
    if (isDotGit(component)) {
      return `"${component}" is git's own directory on some file systems (HFS+ and NTFS fold it to .git), which no repository may contain`;
    }
    const special = specialFileOf(component);
    if (special && component !== special) {
      return `"${component}" is another spelling of ${special} on some file systems; name the file ${special} exactly`;
    }
  }
  return null;
}

/** Whether a value would be read as a command-line option by the program it reaches (git's `looks_like_command_line_option`). */
function looksLikeOption(value: string): boolean {
  return value.startsWith("-");
}

/**
 * Why git's fsck would refuse a `.gitmodules` file, given its entries as
 * `git config --list` reads them (`submodule.<name>.<key>` = value), or null.
 */
export function gitmodulesProblem(entries: ReadonlyArray<{ key: string; value: string }>): string | null {
  for (const { key, value } of entries) {
    const match = /^submodule\.(.*)\.([^.]+)$/s.exec(key);
    if (!match) continue;
    const [, name = "", setting = ""] = match;
    if (name === "" || name.split(/[/\\]/).includes("..")) {
      return `the submodule name "${name}" is empty or climbs out with ".."`;
    }
    const lower = setting.toLowerCase();
    if (lower === "url") {
      if (looksLikeOption(value))
        return `the url of submodule "${name}" starts with "-", which git would run as an option`;
      if (/%0[ad]/i.test(value) || [...value].some((char) => char < " " || char === "\x7f")) {
        return `the url of submodule "${name}" contains a newline or control character`;
      }
    } else if (lower === "path" && looksLikeOption(value)) {
      return `the path of submodule "${name}" starts with "-", which git would run as an option`;
    } else if (lower === "update" && value.trim().startsWith("!")) {
      return `submodule "${name}" sets update to a command ("!…"), which git refuses in .gitmodules`;
    }
  }
  return null;
}

/** Why git's fsck would refuse a `.gitattributes` file's contents, or null. */
export function gitattributesProblem(content: Buffer): string | null {
  let start = 0;
  let line = 1;
  while (start < content.length) {
    const end = content.indexOf(0x0a, start);
    const stop = end === -1 ? content.length : end;
    if (stop - start > MAX_GITATTRIBUTES_LINE) {
      return `line ${line} is longer than ${MAX_GITATTRIBUTES_LINE} bytes, which git refuses`;
    }
    start = stop + 1;
    line += 1;
  }
  return null;
}
