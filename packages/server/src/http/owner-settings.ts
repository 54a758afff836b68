import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import type { Action, SettingsOwner } from "../auth/authorize.js";
import { principalOf } from "./access.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The owner a settings route acts for, set by its access declaration. */
    settingsOwner?: SettingsOwner;
  }
}

/** One settings operation, declared once and served for both kinds of owner. */
export interface OwnerSettingsRoute {
  method: HTTPMethods;
  /** The path below the owner, e.g. `/inference/preferences`. */
  path: string;
  /** The account route's whole path, where the clients use another than `/api/me<path>`. */
  accountPath?: string;
  /** The operation id's tail; the routes get `account_<id>` and `organization_<id>`. */
  operationId: string;
  summary: string;
  tags: string[];
  action: Action;
  params?: TObject;
  querystring?: TSchema;
  body?: TSchema;
  response: Record<number, unknown>;
  handler: (owner: SettingsOwner, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/**
 * Registers a settings operation under `/api/me/...` for the caller's account
 * and under `/api/organizations/{handle}/...` for an organization, as the spec
 * mirrors them. Both go through the one authorization function: the account
 * route on the caller's own account, the organization route on the
 * organization (its admins).
 */
/** Finds an organization by handle, or throws the 404 that names it; the organizations area implements it. */
export interface OrganizationLookup {
  find(handle: string): Promise<{ id: string; handle: string }>;
}

export function ownerSettingsRoute(
  app: FastifyInstance,
  orgs: OrganizationLookup,
  route: OwnerSettingsRoute,
): void {
  const schema = {
    summary: route.summary,
    tags: route.tags,
    ...(route.querystring ? { querystring: route.querystring } : {}),
    ...(route.body ? { body: route.body } : {}),
    response: route.response,
  };
  app.route({
    method: route.method,
    url: route.accountPath ?? `/api/me${route.path}`,
    schema: {
      ...schema,
      operationId: `account_${route.operationId}`,
      ...(route.params ? { params: route.params } : {}),
    },
    config: { access: { action: route.action } },
    handler: (request, reply) => {
      const principal = principalOf(request);
      return route.handler({ type: "user", id: principal.userId, handle: principal.handle }, request, reply);
    },
  });
  app.route({
    method: route.method,
    url: `/api/organizations/:handle${route.path}`,
    schema: {
      ...schema,
      operationId: `organization_${route.operationId}`,
      params: Type.Object({ handle: Type.String(), ...(route.params?.properties ?? {}) }),
    },
    config: {
      access: {
        action: route.action,
        resource: async (request) => {
          const org = await orgs.find((request.params as { handle: string }).handle);
          request.settingsOwner = { type: "org", id: org.id, handle: org.handle };
          return { type: "organization", id: org.id, handle: org.handle };
        },
      },
    },
    handler: (request, reply) => {
      if (!request.settingsOwner) throw new Error("The organization route resolved no owner.");
      return route.handler(request.settingsOwner, request, reply);
    },
  });
}
