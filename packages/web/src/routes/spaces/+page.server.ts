import { listing } from "$lib/server/listing";
import type { PageServerLoad } from "./$types";

export const load: PageServerLoad = (event) => listing(event, "space", 30, { personalized: true });
