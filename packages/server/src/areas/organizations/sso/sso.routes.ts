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
import type { FastifyReply, FastifyRequest } from "fastify";
import type { HubError } from "../../../errors.js";
import { principalOf } from "../../../http/access.js";
import { renderHubError } from "../../../http/error-handler.js";
import { organizationAccess, organizationOf } from "../orgs/orgs.routes.js";
import type { OrgsService } from "../orgs/orgs.service.js";
import type { SsoService } from "./sso.service.js";

const HandleParams = Type.Object({ handle: Type.String() });
const providerErrors = { 404: ApiErrorRef, 502: ApiErrorRef };

/** Whether the request is a person's browser navigating (it asks for HTML), not an API client. */
const wantsPage = (request: FastifyRequest) => /\btext\/html\b/i.test(request.headers.accept ?? "");

/** The organization's handle as the path named it, for a same-site path (never another origin). */
const handleOf = (request: FastifyRequest) =>
  encodeURIComponent((request.params as { handle?: string }).handle ?? "");

/**
 * How a sign-in's failure reaches a browser: the site's page for it, which shows a fixed message for the
 * error's code (a code from the catalog, never free text; the page keeps its own list of what it explains).
 * Starting without a hub session sends the browser to sign in first, then back to start. API clients keep
 * the JSON error.
 */
function signInErrorPage({ signInFirst }: { signInFirst: boolean }) {
  return (error: HubError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (!wantsPage(request)) return reply.send(renderHubError(error));
    const handle = handleOf(request);
    if (signInFirst && error.status === 401) {
      return reply.redirect(
        `/login?next=${encodeURIComponent(`/api/organizations/${handle}/sso/login`)}`,
        303,
      );
    }
    return reply.redirect(`/organizations/${handle}/sso/error?code=${encodeURIComponent(error.code)}`, 303);
  };
}

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
            303: {
              type: "null",
              description:
                "A browser (Accept: text/html) that may not start is sent to sign in to the hub, or to the site's page for the error.",
            },
            ...providerErrors,
          },
        },
        config: {
          access: organizationAccess(orgs, "org:read", true),
          renderError: signInErrorPage({ signInFirst: true }),
        },
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
          response: {
            200: SsoAuthorization,
            303: {
              type: "null",
              description:
                "A browser (Accept: text/html) is sent on to the organization's page, or on failure to the site's page for the error.",
            },
            ...providerErrors,
          },
        },
        config: {
          access: organizationAccess(orgs, "org:read", true),
          renderError: signInErrorPage({ signInFirst: false }),
        },
      },
      async (request, reply) => {
        const org = organizationOf(request);
        const signedIn = await sso.finishLogin(org, principalOf(request), request.query);
        if (wantsPage(request)) return reply.redirect(`/${encodeURIComponent(org.handle)}`, 303);
        return signedIn;
      },
    );
  };
}
