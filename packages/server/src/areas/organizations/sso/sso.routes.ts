import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  ApiErrorRef,
  OrganizationSso,
  OrganizationSsoPrompts,
  SsoAuthorization,
  SsoCallbackQuery,
  UpdateOrganizationSso,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../../../http/access.js";
import { organizationAccess, organizationOf } from "../orgs/orgs.routes.js";
import type { OrgsService } from "../orgs/orgs.service.js";
import type { SsoService } from "./sso.service.js";

const HandleParams = Type.Object({ handle: Type.String() });
const providerErrors = { 404: ApiErrorRef, 502: ApiErrorRef };

/**
 * Organization single sign-on: its admins configure it under
 * `/api/organizations/{handle}/sso` (reachable without an SSO sign-in, so a
 * broken configuration can be repaired), members sign in through `login` and
 * `callback`, and `/api/me/organization-sso` lists the sign-ins a member lacks.
 */
export function ssoRoutes({ sso, orgs }: { sso: SsoService; orgs: OrgsService }): FastifyPluginAsyncTypebox {
  const tags = ["Organizations"];
  return async (app) => {
    app.get(
      "/api/me/organization-sso",
      {
        schema: {
          operationId: "account_organization_sso_prompts_get",
          tags: ["Account"],
          summary:
            "Your organizations that require single sign-on where you have no valid SSO sign-in, with where to sign in.",
          response: { 200: OrganizationSsoPrompts },
        },
        config: { access: { action: "settings:read" } },
      },
      async (request) => sso.prompts(principalOf(request)),
    );

    app.get(
      "/api/organizations/:handle/sso",
      {
        schema: {
          operationId: "organization_sso_get",
          tags,
          summary: "The organization's single sign-on settings (never the client secret); admins only.",
          params: HandleParams,
          response: { 200: OrganizationSso, 404: ApiErrorRef },
        },
        config: { access: organizationAccess(orgs, "settings:read", true) },
      },
      async (request) => sso.settings(organizationOf(request)),
    );

    app.put(
      "/api/organizations/:handle/sso",
      {
        schema: {
          operationId: "organization_sso_update",
          tags,
          summary:
            "Set the organization's OpenID Connect provider and whether members must sign in with it; admins only.",
          params: HandleParams,
          body: UpdateOrganizationSso,
          response: { 200: OrganizationSso, 404: ApiErrorRef },
        },
        config: { access: organizationAccess(orgs, "settings:write", true) },
      },
      async (request) => sso.update(organizationOf(request), request.body),
    );

    app.delete(
      "/api/organizations/:handle/sso",
      {
        schema: {
          operationId: "organization_sso_delete",
          tags,
          summary: "Remove single sign-on and every SSO sign-in made with it; admins only.",
          params: HandleParams,
          response: { 204: { type: "null", description: "Removed." }, 404: ApiErrorRef },
        },
        config: { access: organizationAccess(orgs, "settings:write", true) },
      },
      async (request, reply) => {
        await sso.remove(organizationOf(request));
        return reply.status(204).send();
      },
    );

    app.get(
      "/api/organizations/:handle/sso/login",
      {
        schema: {
          operationId: "organization_sso_login",
          tags,
          summary:
            "Start an SSO sign-in: redirects to the provider (authorization code flow with PKCE); members only, in a browser signed in to the hub.",
          params: HandleParams,
          response: {
            302: { type: "null", description: "To the provider's authorization endpoint (Location)." },
            ...providerErrors,
          },
        },
        config: { access: organizationAccess(orgs, "org:read", true) },
      },
      async (request, reply) =>
        reply.redirect(await sso.startLogin(organizationOf(request), principalOf(request)), 302),
    );

    app.get(
      "/api/organizations/:handle/sso/callback",
      {
        schema: {
          operationId: "organization_sso_callback",
          tags,
          summary:
            "Where the provider sends the browser back: verifies the ID token and records your SSO sign-in. Same account as the one that started.",
          params: HandleParams,
          querystring: SsoCallbackQuery,
          response: { 200: SsoAuthorization, ...providerErrors },
        },
        config: { access: organizationAccess(orgs, "org:read", true) },
      },
      async (request) => sso.finishLogin(organizationOf(request), principalOf(request), request.query),
    );
  };
}
