import { describe, expect, it } from "vitest";
import { parseUnifiedDiff, unquote } from "./unified-diff.js";

/** What `git diff --full-index` printed for a commit that touches every kind of change (made with git 2.x). */
const DIFF = [
  "diff --git a/a.txt b/a.txt",
  "index 4cb29ea38f70d7c61b2a3a25b02e3bdf44905402..8e44fbc30be839dd19a873c213fffdf513569e19 100644",
  "--- a/a.txt",
  "+++ b/a.txt",
  "@@ -1,3 +1,4 @@",
  "-one",
  "+ONE",
  " two",
  " three",
  "+four",
  "diff --git a/bin.dat b/bin.dat",
  "new file mode 100644",
  "index 0000000000000000000000000000000000000000..bdc955b7b2e610ad5a72302b139a2e6cb325519a",
  "Binary files /dev/null and b/bin.dat differ",
  "diff --git a/dash.txt b/dash.txt",
  "new file mode 100644",
  "index 0000000000000000000000000000000000000000..895bfc4a27b5ad0d72d6e4ccc2df3c6dd5c7a4aa",
  "--- /dev/null",
  "+++ b/dash.txt",
  "@@ -0,0 +1 @@",
  "+-- dashes",
  "diff --git a/gone.txt b/gone.txt",
  "deleted file mode 100644",
  "index 286c5f5776916d7d7d5849988ca9d83e722cf9c2..0000000000000000000000000000000000000000",
  "--- a/gone.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-gone",
  "diff --git a/old-name.txt b/new-name.txt",
  "similarity index 100%",
  "rename from old-name.txt",
  "rename to new-name.txt",
  "diff --git a/nonl.txt b/nonl.txt",
  "index c1b0730e0133447badcfd47fd144e254807b06e1..e25f1814e51579d5f55c0f1fe0135ddb28a47f4a 100644",
  "--- a/nonl.txt",
  "+++ b/nonl.txt",
  "@@ -1 +1 @@",
  "-x",
  "\\ No newline at end of file",
  "+y",
  "\\ No newline at end of file",
  'diff --git "a/t\\303\\251st.txt" "b/t\\303\\251st.txt"',
  "new file mode 100644",
  "index 0000000000000000000000000000000000000000..c6003325155f475bd7c87731607525dce73be9cf",
  "--- /dev/null",
  '+++ "b/t\\303\\251st.txt"',
  "@@ -0,0 +1 @@",
  "+\u00e9",
  "diff --git a/w.bin b/w.bin",
  "new file mode 100644",
  "index 0000000000000000000000000000000000000000..e09b346a5b792d22ae106a9237cca91be89a8f5d",
  "--- /dev/null",
  "+++ b/w.bin",
  "@@ -0,0 +1,3 @@",
  "+version https://git-lfs.github.com/spec/v1",
  "+oid sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "+size 12",
  "",
].join("\n");

describe("parseUnifiedDiff", () => {
  const files = parseUnifiedDiff(DIFF);
  const byPath = (path: string) => files.find((file) => file.path === path);

  it("reads every file with its status and kind", () => {
    expect(files.map((file) => [file.path, file.status, file.kind])).toEqual([
      ["a.txt", "modified", "text"],
      ["bin.dat", "added", "binary"],
      ["dash.txt", "added", "text"],
      ["gone.txt", "removed", "text"],
      ["new-name.txt", "renamed", "text"],
      ["nonl.txt", "modified", "text"],
      ["tést.txt", "added", "text"],
      ["w.bin", "added", "lfs"],
    ]);
    expect(byPath("new-name.txt")?.oldPath).toBe("old-name.txt");
    expect(byPath("new-name.txt")?.hunks).toEqual([]);
  });

  it("numbers lines on both sides and counts additions and deletions", () => {
    const file = byPath("a.txt");
    expect(file).toMatchObject({ additions: 2, deletions: 1 });
    expect(file?.hunks?.[0]).toMatchObject({ oldStart: 1, oldLines: 3, newStart: 1, newLines: 4 });
    expect(file?.hunks?.[0]?.lines).toEqual([
      { type: "removed", oldNumber: 1, text: "one" },
      { type: "added", newNumber: 1, text: "ONE" },
      { type: "context", oldNumber: 2, newNumber: 2, text: "two" },
      { type: "context", oldNumber: 3, newNumber: 3, text: "three" },
      { type: "added", newNumber: 4, text: "four" },
    ]);
  });

  it("keeps a line that looks like a header, and marks a missing newline at the end", () => {
    expect(byPath("dash.txt")?.hunks?.[0]?.lines).toEqual([
      { type: "added", newNumber: 1, text: "-- dashes" },
    ]);
    expect(byPath("gone.txt")?.hunks?.[0]?.lines).toEqual([{ type: "removed", oldNumber: 1, text: "gone" }]);
    expect(byPath("nonl.txt")?.hunks?.[0]?.lines).toEqual([
      { type: "removed", oldNumber: 1, text: "x", noNewlineAtEnd: true },
      { type: "added", newNumber: 1, text: "y", noNewlineAtEnd: true },
    ]);
  });

  it("summarises a Git LFS pointer by its object", () => {
    expect(byPath("w.bin")?.lfs).toEqual({ old: null, new: { oid: "a".repeat(64), size: 12 } });
    expect(byPath("w.bin")?.hunks).toBeUndefined();
  });

  it("stops a hunk cut short by a truncated diff without inventing lines", () => {
    const cut = parseUnifiedDiff(
      ["diff --git a/x b/x", "--- a/x", "+++ b/x", "@@ -1,3 +1,3 @@", " a", "-b"].join("\n"),
    );
    expect(cut[0]?.hunks?.[0]?.lines.map((line) => line.type)).toEqual(["context", "removed"]);
  });

  it("unquotes C-style paths with octal bytes", () => {
    expect(unquote('"t\\303\\251st \\"q\\".txt"')).toBe('tést "q".txt');
    expect(unquote("plain")).toBe("plain");
  });
});
