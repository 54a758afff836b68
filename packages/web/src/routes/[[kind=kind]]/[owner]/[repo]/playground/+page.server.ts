import { error } from "@sveltejs/kit";
import type { HubConfiguration } from "@hub/api";
import { load as apiLoad } from "$lib/server/api";
import type { PageServerLoad } from "./$types";

/**
 * The chat playground of a model the Router serves for chat. The page streams from the Router in the
 * browser with a short-lived credential of the browser's session; nothing here holds a secret.
 */
export const load: PageServerLoad = async ({ parent, fetch, locals }) => {
  const { inference } = await parent();
  const providers = inference?.providers.filter((p) => p.task === "chat") ?? [];
  if (!inference || providers.length === 0) error(404, { message: "Not found" });
  const { data: hub } = await apiLoad<HubConfiguration>(fetch, "/.well-known/hub-configuration");
  return {
    modelId: inference.id,
    providers: providers.map((p) => p.provider),
    routerUrl: hub.inference_url,
    signedIn: locals.viewer !== null,
  };
};
