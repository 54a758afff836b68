import { describe, expect, it } from "vitest";
import {
  gitattributesProblem,
  gitmodulesProblem,
  isDotGit,
  pathProblem,
  specialFileOf,
} from "./path-rules.js";

describe("git's path rules", () => {
  it.each([
    ".git",
    ".GIT",
    ".Git",
    ".g\u200cit",
    "\ufeff.git",
    ".gi\u200dt",
    "git~1",
    "GIT~1",
    ".git.",
    ".git ",
    ".git. . ",
    ".git::$INDEX_ALLOCATION",
    "git~1:stream",
  ])("sees %j as .git", (component) => {
    expect(isDotGit(component)).toBe(true);
    expect(pathProblem(`${component}/config`)).toMatch(/git's own directory/);
    expect(pathProblem(`a/${component}/hooks/post-checkout`)).toMatch(/git's own directory/);
  });

  it.each([".gitx", "git", "x.git", ".git.txt", "git~2", "git~10", ".github", "my.git.repo"])(
    "does not take %j for .git",
    (component) => {
      expect(isDotGit(component)).toBe(false);
      expect(pathProblem(`${component}/file`)).toBeNull();
    },
  );

  it.each([
    ["", /empty/],
    ["/etc/passwd", /absolute/],
    ["a//b", /empty segment/],
    ["a/", /empty segment/],
    ["./a", /"\." segment/],
    ["a/../b", /"\.\." segment/],
    ["a\\b", /backslash/],
    ["a\0b", /NUL/],
    ["x".repeat(1025), /longer than 1024/],
  ])("refuses %j", (path, reason) => {
    expect(pathProblem(path)).toMatch(reason);
  });

  it.each([
    "README.md",
    "a..b",
    "dir/.gitignore",
    ".gitmodules",
    "sub/.gitattributes",
    "é t/ü.txt",
    "a/b/c/d/e",
  ])("accepts %j", (path) => expect(pathProblem(path)).toBeNull());

  it("refuses other spellings of the files git reads its settings from", () => {
    for (const alias of [
      ".GITMODULES",
      ".gitmodules.",
      ".gitmodules ",
      "gitmod~1",
      ".gitmodu\u200cles",
      "GITATT~1",
      ".gitattributes:x",
    ]) {
      expect(specialFileOf(alias)).not.toBeNull();
      expect(pathProblem(alias)).toMatch(/another spelling/);
    }
    expect(specialFileOf(".gitmodules")).toBe(".gitmodules");
  });

  it("refuses .gitmodules settings git would run as options or commands", () => {
    const entry = (key: string, value: string) => [{ key, value }];
    expect(gitmodulesProblem(entry("submodule.x.url", "--upload-pack=touch /tmp/pwned"))).toMatch(
      /starts with "-"/,
    );
    expect(gitmodulesProblem(entry("submodule.x.path", "-x"))).toMatch(/starts with "-"/);
    expect(gitmodulesProblem(entry("submodule.x.update", "!rm -rf ."))).toMatch(/command/);
    expect(gitmodulesProblem(entry("submodule.x.url", "https://example.com/a%0aprotocol=evil"))).toMatch(
      /newline/,
    );
    expect(gitmodulesProblem(entry("submodule.../../x.url", "https://example.com/a"))).toMatch(/climbs out/);
    expect(gitmodulesProblem(entry("submodule.lib.url", "https://example.com/lib.git"))).toBeNull();
    expect(gitmodulesProblem(entry("submodule.lib.path", "vendor/lib"))).toBeNull();
    expect(gitmodulesProblem(entry("core.bare", "false"))).toBeNull();
  });

  it("refuses .gitattributes lines git will not read", () => {
    expect(gitattributesProblem(Buffer.from("*.bin filter=lfs\n"))).toBeNull();
    expect(gitattributesProblem(Buffer.from(`ok\n${"a".repeat(2049)} -text\n`))).toMatch(/line 2 is longer/);
  });
});
