import type { DiffFile, DiffHunk, DiffLine } from "@hub/api";

/**
 * Reads the unified diff text `git diff` prints (a pull request's `?diff=1`) into the files, hunks and lines
 * the commit page shows (`@hub/api`'s DiffFile), so both pages share one view. It follows git's format
 * (https://git-scm.com/docs/git-diff#_generating_patch_text_with_p): a `diff --git` header per file, its
 * extended header lines, `---`/`+++`, then hunks whose `@@ -a,b +c,d @@` counts say where each one ends, so a
 * removed line that looks like a header is still a line. Paths git quoted (C-style, octal bytes) are unquoted.
 * A Git LFS pointer file is summarised by the objects it names, as the commit page does.
 */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const files: DiffFile[] = [];
  let i = 0;
  while (i < lines.length) {
    const header = lines[i] ?? "";
    if (!header.startsWith("diff --git ")) {
      i++;
      continue;
    }
    i++;
    const file = readFile(header, lines, i);
    files.push(file.file);
    i = file.next;
  }
  return files;
}

interface Reading {
  file: DiffFile;
  next: number;
}

function readFile(header: string, lines: string[], start: number): Reading {
  let i = start;
  let status: DiffFile["status"] = "modified";
  let oldPath: string | null = null;
  let newPath: string | null = null;
  let renameFrom: string | null = null;
  let renameTo: string | null = null;
  let binary = false;
  // The extended header, up to the first hunk or the next file.
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (line.startsWith("diff --git ") || line.startsWith("@@ ")) break;
    if (line.startsWith("new file mode ")) status = "added";
    else if (line.startsWith("deleted file mode ")) status = "removed";
    else if (line.startsWith("rename from ")) renameFrom = unquote(line.slice("rename from ".length));
    else if (line.startsWith("rename to ")) renameTo = unquote(line.slice("rename to ".length));
    else if (line.startsWith("--- ")) oldPath = sidePath(line.slice(4));
    else if (line.startsWith("+++ ")) newPath = sidePath(line.slice(4));
    else if (line.startsWith("Binary files ") || line === "GIT binary patch") binary = true;
    i++;
  }
  if (renameFrom !== null && renameTo !== null) status = "renamed";
  const fromHeader = headerPaths(header.slice("diff --git ".length));
  const path = renameTo ?? newPath ?? oldPath ?? fromHeader?.[1] ?? "";
  const hunks: DiffHunk[] = [];
  while (i < lines.length && (lines[i] ?? "").startsWith("@@ ")) {
    const read = readHunk(lines, i);
    if (!read) break;
    hunks.push(read.hunk);
    i = read.next;
  }
  const file: DiffFile = {
    path: status === "removed" ? (oldPath ?? renameFrom ?? fromHeader?.[0] ?? path) : path,
    status,
    kind: binary ? "binary" : "text",
  };
  if (status === "renamed" && renameFrom !== null) file.oldPath = renameFrom;
  if (!binary) {
    const lfs = lfsSides(hunks, status);
    if (lfs) {
      file.kind = "lfs";
      file.lfs = lfs;
    } else {
      file.hunks = hunks;
      file.additions = hunks.reduce((n, h) => n + h.lines.filter((l) => l.type === "added").length, 0);
      file.deletions = hunks.reduce((n, h) => n + h.lines.filter((l) => l.type === "removed").length, 0);
    }
  }
  return { file, next: i };
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** One hunk: its header, then exactly as many old and new lines as it counts (plus "\ No newline" marks). */
function readHunk(lines: string[], start: number): { hunk: DiffHunk; next: number } | null {
  const match = HUNK.exec(lines[start] ?? "");
  if (!match) return null;
  const hunk: DiffHunk = {
    oldStart: Number(match[1]),
    oldLines: match[2] === undefined ? 1 : Number(match[2]),
    newStart: Number(match[3]),
    newLines: match[4] === undefined ? 1 : Number(match[4]),
    lines: [],
  };
  let oldLeft = hunk.oldLines;
  let newLeft = hunk.newLines;
  let oldNumber = hunk.oldStart;
  let newNumber = hunk.newStart;
  let i = start + 1;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (line.startsWith("\\")) {
      const last = hunk.lines.at(-1);
      if (last) last.noNewlineAtEnd = true;
      i++;
      continue;
    }
    if (oldLeft <= 0 && newLeft <= 0) break;
    const mark = line.charAt(0);
    const rest = line.slice(1);
    let entry: DiffLine;
    if (mark === "+" && newLeft > 0) {
      entry = { type: "added", newNumber: newNumber++, text: rest };
      newLeft--;
    } else if (mark === "-" && oldLeft > 0) {
      entry = { type: "removed", oldNumber: oldNumber++, text: rest };
      oldLeft--;
    } else if ((mark === " " || line === "") && oldLeft > 0 && newLeft > 0) {
      entry = { type: "context", oldNumber: oldNumber++, newNumber: newNumber++, text: rest };
      oldLeft--;
      newLeft--;
    } else {
      // Not a line this hunk can hold (a diff cut short): the hunk ends here.
      break;
    }
    hunk.lines.push(entry);
    i++;
  }
  return { hunk, next: i };
}

/** The path of a `---`/`+++` line: `a/…` or `b/…`, or `/dev/null` (none); git may quote it, and may add a tab. */
function sidePath(raw: string): string | null {
  const value = raw.startsWith('"') ? unquote(raw) : raw.replace(/\t$/, "");
  if (value === "/dev/null") return null;
  return value.replace(/^[ab]\//, "");
}

/** The two paths of a `diff --git a/… b/…` header, when they can be told apart. */
function headerPaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const end = quotedEnd(rest);
    const first = unquote(rest.slice(0, end));
    const second = rest.slice(end + 1);
    return [first.replace(/^a\//, ""), unquote(second).replace(/^b\//, "")];
  }
  // Unquoted and the same path on both sides (anything but a rename): "a/P b/P".
  if ((rest.length - 5) % 2 !== 0) return null;
  const length = (rest.length - 5) / 2;
  const first = rest.slice(2, 2 + length);
  return rest === `a/${first} b/${first}` ? [first, first] : null;
}

/** Where the quoted string at the start of `text` ends (just after its closing quote). */
function quotedEnd(text: string): number {
  for (let i = 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

const ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };

/** A path as git writes it: as is, or in double quotes with C escapes and octal bytes (core.quotePath). */
export function unquote(text: string): string {
  if (!text.startsWith('"')) return text;
  const bytes: number[] = [];
  const end = quotedEnd(text) - 1;
  for (let i = 1; i < end; i++) {
    const char = text[i] ?? "";
    if (char !== "\\") {
      bytes.push(...new TextEncoder().encode(char));
      continue;
    }
    const next = text[++i] ?? "";
    const octal = /^[0-7]{3}/.exec(text.slice(i, i + 3));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 2;
    } else bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

const POINTER_VERSION = "version https://git-lfs.github.com/spec/v1";

/** The LFS objects before and after, when every line the diff shows of the file is a Git LFS pointer's. */
function lfsSides(hunks: DiffHunk[], status: DiffFile["status"]): DiffFile["lfs"] | null {
  const all = hunks.flatMap((hunk) => hunk.lines);
  if (all.length === 0) return null;
  const side = (type: "added" | "removed") => {
    const text = all.filter((line) => line.type === "context" || line.type === type).map((l) => l.text);
    if (text.length === 0) return null;
    const oid = /^oid sha256:([0-9a-f]{64})$/.exec(text.find((l) => l.startsWith("oid ")) ?? "")?.[1];
    const size = /^size (\d+)$/.exec(text.find((l) => l.startsWith("size ")) ?? "")?.[1];
    if (text[0] !== POINTER_VERSION || oid === undefined || size === undefined) return undefined;
    return { oid, size: Number(size) };
  };
  const before = status === "added" ? null : side("removed");
  const after = status === "removed" ? null : side("added");
  if (before === undefined || after === undefined || (before === null && after === null)) return null;
  return { old: before, new: after };
}
