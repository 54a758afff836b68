import { listing } from "$lib/server/listing";
import type { PageServerLoad } from "./$types";

export const load: PageServerLoad = async (event) => {
  const [models, datasets, spaces] = await Promise.all([
    listing(event, "model", 8),
    listing(event, "dataset", 8),
    listing(event, "space", 8),
  ]);
  return { models, datasets, spaces };
};
