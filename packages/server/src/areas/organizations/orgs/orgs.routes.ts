import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  AddMemberRequest,
  ApiErrorRef,
  ChangeRoleRequest,
  CreateOrgRequest,
  OrgMember,
  OrgOverview,
  OrgSummary,
} from "@hub/api";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { Action } from "../../../auth/authorize.js";
import type { OrganizationRow } from "../../../db/schema.js";
import { principalOf, type Access } from "../../../http/access.js";
import type { OrgsService } from "./orgs.service.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The organization a route acts on, loaded by its access declaration. */
    organization?: OrganizationRow;
  }
}

/** The organization a route's access declaration (`organizationAccess`) loaded. */
export function organizationOf(request: FastifyRequest): OrganizationRow {
  if (!request.organization) throw new Error("The route declared no organization access.");
  return request.organization;
}

/**
 * Access to the organization the path's `handle` names, loaded once and kept
 * on the request. `ssoExempt` marks the routes members reach without an SSO
 * sign-in (its SSO settings and sign-in, leaving).
 */
export function organizationAccess(orgs: OrgsService, action: Action, ssoExempt = false): Access {
  return {
    action,
    resource: async (request) => {
      const org = await orgs.find((request.params as { handle: string }).handle);
      request.organization = org;
      return { type: "organization", id: org.id, handle: org.handle, ...(ssoExempt ? { ssoExempt } : {}) };
    },
  };
}

const HandleParams = Type.Object({ handle: Type.String() });
const MemberParams = Type.Object({ handle: Type.String(), user: Type.String() });
const NoContent = { type: "null", description: "Done." } as const;

/** Organizations: creation, the public summary, and membership managed by admins. */
export function orgsRoutes({ orgs }: { orgs: OrgsService }): FastifyPluginAsyncTypebox {
  const orgAccess = (action: Action) => organizationAccess(orgs, action);
  const tags = ["Organizations"];

  return async (app) => {
    app.post(
      "/api/organizations",
      {
        schema: {
          operationId: "orgs_create",
          tags,
          summary: "Create an organization; you become its admin.",
          body: CreateOrgRequest,
          response: { 201: OrgSummary, 409: ApiErrorRef },
        },
        config: { access: { action: "org:admin" } },
      },
      async (request, reply) => {
        const org = await orgs.createOrganization({
          handle: request.body.name,
          ownerHandle: principalOf(request).handle,
          fullname: request.body.fullname,
        });
        return reply.status(201).send(await orgs.summary(org));
      },
    );

    app.get(
      "/api/organizations/:handle",
      {
        schema: {
          operationId: "orgs_get",
          tags,
          summary: "An organization's public summary.",
          params: HandleParams,
          response: { 200: OrgSummary, 404: ApiErrorRef },
        },
        config: { access: "optional" },
      },
      async (request) => orgs.summary(await orgs.find(request.params.handle)),
    );

    app.get(
      "/api/organizations/:handle/overview",
      {
        schema: {
          operationId: "orgs_overview",
          tags,
          summary: "An organization's public overview: members and public repositories counted.",
          params: HandleParams,
          response: { 200: OrgOverview, 404: ApiErrorRef },
        },
        config: { access: "optional" },
      },
      async (request) => orgs.overview(await orgs.find(request.params.handle)),
    );

    app.get(
      "/api/organizations/:handle/members",
      {
        schema: {
          operationId: "orgs_members_list",
          tags,
          summary: "Members and their roles; members only.",
          params: HandleParams,
          response: { 200: Type.Array(OrgMember), 404: ApiErrorRef },
        },
        config: { access: orgAccess("org:read") },
      },
      async (request) => orgs.members(organizationOf(request)),
    );

    app.post(
      "/api/organizations/:handle/members",
      {
        schema: {
          operationId: "orgs_members_add",
          tags,
          summary: "Add a member with a role; admins only.",
          params: HandleParams,
          body: AddMemberRequest,
          response: { 201: OrgMember, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: orgAccess("org:admin") },
      },
      async (request, reply) =>
        reply
          .status(201)
          .send(await orgs.invite(organizationOf(request), request.body.user, request.body.role)),
    );

    app.put(
      "/api/organizations/:handle/members/:user",
      {
        schema: {
          operationId: "orgs_members_role",
          tags,
          summary: "Change a member's role; admins only. The last admin cannot step down.",
          params: MemberParams,
          body: ChangeRoleRequest,
          response: { 204: NoContent, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: orgAccess("org:admin") },
      },
      async (request, reply) => {
        await orgs.changeRole(organizationOf(request), request.params.user, request.body.role);
        return reply.status(204).send();
      },
    );

    app.delete(
      "/api/organizations/:handle/members/:user",
      {
        schema: {
          operationId: "orgs_members_remove",
          tags,
          summary: "Remove a member; admins only. The last admin cannot be removed.",
          params: MemberParams,
          response: { 204: NoContent, 404: ApiErrorRef, 409: ApiErrorRef },
        },
        config: { access: orgAccess("org:admin") },
      },
      async (request, reply) => {
        await orgs.removeMember(organizationOf(request), request.params.user);
        return reply.status(204).send();
      },
    );

    app.post(
      "/api/organizations/:handle/leave",
      {
        schema: {
          operationId: "orgs_leave",
          tags,
          summary: "Leave the organization (no SSO sign-in needed). The last admin cannot leave.",
          params: HandleParams,
          response: { 204: NoContent, 409: ApiErrorRef },
        },
        config: { access: organizationAccess(orgs, "org:read", true) },
      },
      async (request, reply) => {
        await orgs.removeMember(organizationOf(request), principalOf(request).handle);
        return reply.status(204).send();
      },
    );
  };
}
