import { error } from "@sveltejs/kit";
import type { HubConfiguration } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/** A model the Router serves: its providers, and where the Router listens (for the code samples). */
export const load: PageServerLoad = async ({ parent, fetch }) => {
  const { inference } = await parent();
  if (!inference) error(404, { message: "Not found" });
  const { data: hub } = await apiLoad<HubConfiguration>(fetch, "/.well-known/hub-configuration");
  return { model: inference, routerUrl: hub.inference_url };
};
