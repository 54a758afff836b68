import type { ParamMatcher } from "@sveltejs/kit";

/** The URL prefix of dataset and Space repositories (`/datasets/{owner}/{name}`); models have none. */
export const match: ParamMatcher = (param) => param === "datasets" || param === "spaces";
