import { describe, expect, it } from "vitest";
import { DEFAULT_GITATTRIBUTES } from "./default-gitattributes.js";
import { lfsMatcher } from "./gitattributes.js";

describe("lfsMatcher", () => {
  const matches = lfsMatcher(DEFAULT_GITATTRIBUTES);
  it.each([
    ["model.safetensors", true],
    ["deep/dir/model.safetensors", true],
    ["data/train.parquet", true],
    ["logs/events.out.tfevents.123", true],
    ["saved_model/variables/variables.data", true],
    ["other/saved_model/x", false],
    ["archive.tar.gz", true],
    ["README.md", false],
    ["config.json", false],
    ["safetensors.txt", false],
  ])("%s goes to LFS: %s", (path, expected) => {
    expect(matches(path)).toBe(expected);
  });

  it("lets a later line take a path back out of LFS, and anchors patterns with a slash", () => {
    const custom = lfsMatcher(
      "*.bin filter=lfs diff=lfs merge=lfs -text\nsmall/*.bin -filter\n/top.dat filter=lfs\n",
    );
    expect(custom("a/b.bin")).toBe(true);
    expect(custom("small/b.bin")).toBe(false);
    expect(custom("top.dat")).toBe(true);
    expect(custom("nested/top.dat")).toBe(false);
  });
});
