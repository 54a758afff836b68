import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ApiErrorRef, Hardware, HardwareCatalog, HardwareCompatibility, UpdateHardware } from "@hub/api";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../../../http/access.js";
import { repoPathAccess, repositoryOf } from "../../../http/repo-access.js";
import type { RepoLookup } from "../../../domain/repositories.js";
import type { HardwareService } from "./hardware.service.js";

/**
 * The hardware catalog (public), the caller's declared hardware (a settings
 * read or write), and whether a model fits it.
 */
export function hardwareRoutes({
  hardware,
  repos,
}: {
  hardware: HardwareService;
  repos: RepoLookup;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api/hardware",
      {
        schema: {
          operationId: "hardware_catalog_list",
          tags: ["Account"],
          summary:
            "The accelerators and CPUs the hub knows, which hardware declarations are checked against.",
          response: { 200: HardwareCatalog },
        },
        config: { access: "public" },
      },
      async () => hardware.catalog(),
    );

    app.get(
      "/api/me/hardware",
      {
        schema: {
          operationId: "account_hardware_get",
          tags: ["Account"],
          summary: "The local hardware you declared (accelerators, CPU, memory), with its totals.",
          response: { 200: Hardware },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => hardware.declared(principalOf(request).userId),
    );

    app.put(
      "/api/me/hardware",
      {
        schema: {
          operationId: "account_hardware_update",
          tags: ["Account"],
          summary: "Replace your declared hardware; ids come from the catalog (GET /api/hardware).",
          body: UpdateHardware,
          response: { 200: Hardware },
        },
        config: { access: { action: "settings:write" } },
      },
      async (request) => hardware.update(principalOf(request).userId, request.body),
    );

    app.get(
      "/api/models/:owner/:name/hardware-compatibility",
      {
        schema: {
          operationId: "repo_hardware_compatibility",
          tags: ["Repositories"],
          summary: "Whether the model's safetensors weights fit the caller's declared hardware.",
          params: Type.Object({ owner: Type.String(), name: Type.String() }),
          response: { 200: HardwareCompatibility, 404: ApiErrorRef },
        },
        config: { access: repoPathAccess(repos, "model").read },
      },
      async (request) => hardware.compatibility(repositoryOf(request), request.principal?.userId ?? null),
    );
  };
}
