import { Type, type Static } from "@sinclair/typebox";

/** A user or organization handle. */
export const HANDLE_PATTERN = "^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$";

export const OrgRoleSchema = Type.Union(
  [Type.Literal("read"), Type.Literal("contributor"), Type.Literal("write"), Type.Literal("admin")],
  {
    description:
      "read, contributor (creates repositories, cannot write others'), write, or admin (manages members).",
  },
);

export const CreateOrgRequest = Type.Object(
  {
    name: Type.String({ pattern: HANDLE_PATTERN, description: "The organization's handle." }),
    fullname: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false, title: "CreateOrgRequest" },
);
export type CreateOrgRequest = Static<typeof CreateOrgRequest>;

/** The public summary of an organization. */
export const OrgSummary = Type.Object(
  {
    type: Type.Literal("org"),
    id: Type.String({ format: "uuid" }),
    name: Type.String(),
    fullname: Type.String(),
    plan: Type.String({ description: "free, team or enterprise." }),
    numMembers: Type.Integer({ minimum: 0 }),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "OrgSummary" },
);
export type OrgSummary = Static<typeof OrgSummary>;

/** What `huggingface_hub`'s get_organization_overview reads (its `Organization`); repository counts are of public ones. */
export const OrgOverview = Type.Object(
  {
    type: Type.Literal("org"),
    name: Type.String(),
    fullname: Type.String(),
    plan: Type.String(),
    numUsers: Type.Integer({ minimum: 0 }),
    numModels: Type.Integer({ minimum: 0 }),
    numDatasets: Type.Integer({ minimum: 0 }),
    numSpaces: Type.Integer({ minimum: 0 }),
    numFollowers: Type.Integer({ minimum: 0 }),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "OrgOverview" },
);
export type OrgOverview = Static<typeof OrgOverview>;

export const OrgMember = Type.Object(
  {
    user: Type.String(),
    fullname: Type.String(),
    role: OrgRoleSchema,
    joinedAt: Type.String({ format: "date-time" }),
  },
  { title: "OrgMember" },
);
export type OrgMember = Static<typeof OrgMember>;

export const AddMemberRequest = Type.Object(
  { user: Type.String({ pattern: HANDLE_PATTERN }), role: OrgRoleSchema },
  { additionalProperties: false, title: "AddMemberRequest" },
);
export type AddMemberRequest = Static<typeof AddMemberRequest>;

export const ChangeRoleRequest = Type.Object(
  { role: OrgRoleSchema },
  { additionalProperties: false, title: "ChangeRoleRequest" },
);
export type ChangeRoleRequest = Static<typeof ChangeRoleRequest>;
