import { describe, expect, it } from "vitest";
import { DATASET_TAGS, MODEL_TAGS } from "./vocabulary.js";

describe("the tag vocabulary", () => {
  it.each([
    ["models", MODEL_TAGS],
    ["datasets", DATASET_TAGS],
  ])("lists each %s tag once, under its own type, with a label", (_kind, vocabulary) => {
    for (const [type, tags] of Object.entries(vocabulary)) {
      expect(tags.length, type).toBeGreaterThan(0);
      expect(new Set(tags.map((tag) => tag.id)).size, type).toBe(tags.length);
      for (const tag of tags) {
        expect(tag.type, tag.id).toBe(type);
        expect(tag.label.trim(), tag.id).not.toBe("");
        // Prefixed ids are what a card's metadata turns into and a listing filter names.
        if (tag.id.includes(":")) expect(tag.id.startsWith(`${type}:`), tag.id).toBe(true);
      }
    }
  });

  it("names tasks the same way for models and datasets", () => {
    const modelTasks = (MODEL_TAGS.pipeline_tag ?? []).map((tag) => tag.id);
    const datasetTasks = (DATASET_TAGS.task_categories ?? []).map((tag) =>
      tag.id.replace("task_categories:", ""),
    );
    expect(datasetTasks).toEqual(modelTasks);
  });
});
