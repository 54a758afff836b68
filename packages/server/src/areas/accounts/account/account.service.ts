import { randomUUID } from "node:crypto";
import type { Me, Whoami, WhoamiV2 } from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import { hashPassword } from "../../../auth/passwords.js";
import { ROLE_SCOPES, roleOfScopes } from "../../../auth/scopes.js";
import type { Db } from "../../../db/database.js";
import type { UserRow } from "../../../db/schema.js";
import { badRequest, conflict, notFound } from "../../../errors.js";
import { orgsRepository } from "../../organizations/orgs/orgs.repository.js";
import type { MfaService } from "../mfa/mfa.service.js";
import type { ProfileService } from "../profile/profile.service.js";
import type { SocialIdentities } from "../profile/social-identities.js";
import { claimHandle, claimableHandle } from "./handles.js";
import { usersRepository } from "./users.repository.js";
import { usernameRepository } from "../username/username.repository.js";

export interface CreateUserInput {
  handle: string;
  email: string;
  password: string;
  fullname?: string;
  admin?: boolean;
}

/** What the hub accepts as an email address: something@domain.tld, without spaces. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD_LENGTH = 8;

export interface AccountServiceDeps {
  db: Db;
  clock: () => Date;
  reauthWindowSeconds: number;
  profiles: ProfileService;
  identities: SocialIdentities;
  mfa: MfaService;
}

/** Accounts: creation, and the identity and private context the API presents. */
export function createAccountService({
  db,
  clock,
  reauthWindowSeconds,
  profiles,
  identities,
  mfa,
}: AccountServiceDeps) {
  async function requireUser(userId: string): Promise<UserRow> {
    const user = await usersRepository.findById(db, userId);
    if (!user) throw notFound("The account no longer exists.");
    return user;
  }

  function accessTokenSummary(principal: Principal) {
    const { credential } = principal;
    if (credential.type !== "access_token") return undefined;
    const scopes = credential.scopes ?? [...ROLE_SCOPES[credential.role ?? "read"]];
    return {
      displayName: credential.name,
      role: credential.role ?? roleOfScopes(scopes),
      scopes,
      kind: credential.scopes ? ("fine-grained" as const) : ("role" as const),
      createdAt: credential.createdAt,
    };
  }

  return {
    /** The account with this handle, or a 404 that names it. */
    async findUser(handle: string): Promise<UserRow> {
      const user = await usersRepository.findByHandle(db, handle);
      if (!user) throw notFound(`No user is called "${handle}".`);
      return user;
    },

    /** Marks the account's email as verified; the operator does it until email verification exists. */
    async verifyEmail(handle: string): Promise<void> {
      const user = await this.findUser(handle);
      await usersRepository.setEmailVerified(db, user.id, true);
    },

    /** Creates an account; used by the admin CLI now and by sign-up later. */
    async createUser(input: CreateUserInput): Promise<UserRow> {
      const email = input.email.trim().toLowerCase();
      if (!EMAIL_PATTERN.test(email))
        throw badRequest("invalid_email", `"${input.email}" is not an email address.`, "email");
      if (input.password.length < MIN_PASSWORD_LENGTH) {
        throw badRequest(
          "weak_password",
          `Passwords need at least ${MIN_PASSWORD_LENGTH} characters.`,
          "password",
        );
      }
      await claimableHandle(db, input.handle, { now: clock() });
      if (await usersRepository.emailTaken(db, email)) {
        throw conflict("email_taken", `Another account already uses ${email}.`, "email");
      }
      const row: UserRow = {
        id: randomUUID(),
        handle: input.handle,
        email,
        email_verified: 0,
        fullname: input.fullname ?? input.handle,
        password_hash: await hashPassword(input.password),
        is_admin: input.admin ? 1 : 0,
        created_at: clock().toISOString(),
      };
      await db.transaction().execute(async (tx) => {
        await usersRepository.insert(tx, row);
        await claimHandle(tx, row.handle, row.id);
      });
      return row;
    },

    /** The identity record of whoami-v2; whoami omits `auth.accessToken.createdAt`. */
    async identity(principal: Principal): Promise<WhoamiV2> {
      const memberships = await orgsRepository.membershipsOfUser(db, principal.userId);
      const accessToken = accessTokenSummary(principal);
      return {
        type: "user",
        name: principal.handle,
        fullname: principal.fullname,
        orgs: memberships.map((m) => ({
          type: "org",
          name: m.handle,
          fullname: m.fullname,
          roleInOrg: m.role,
        })),
        auth: {
          type: principal.credential.type,
          ...(accessToken ? { accessToken } : {}),
        },
      };
    },

    /** whoami is the identity record without the token's creation time. */
    async whoami(principal: Principal): Promise<Whoami> {
      const identity = await this.identity(principal);
      const accessToken = identity.auth.accessToken;
      if (!accessToken) return identity;
      const { createdAt: _omitted, ...summary } = accessToken;
      return { ...identity, auth: { ...identity.auth, accessToken: summary } };
    },

    /** The private account context of `GET /api/me`. */
    async me(principal: Principal): Promise<Me> {
      const [user, memberships, counts, profile, reservations, linked, mfaStatus] = await Promise.all([
        requireUser(principal.userId),
        orgsRepository.membershipsOfUser(db, principal.userId),
        usersRepository.repositoryCounts(db, principal.userId),
        profiles.profile(principal.userId),
        usernameRepository.reservationsOf(db, principal.userId, clock().toISOString()),
        identities.list(principal.userId),
        mfa.status(principal.userId),
      ]);
      const count = (type: string) => Number(counts.find((c) => c.type === type)?.count ?? 0);
      const { credential } = principal;
      const reauthenticatedUntil = credential.reauthenticatedAt
        ? new Date(Date.parse(credential.reauthenticatedAt) + reauthWindowSeconds * 1000)
        : null;
      return {
        id: user.id,
        type: "user",
        name: user.handle,
        fullname: user.fullname,
        email: user.email,
        emailVerified: user.email_verified === 1,
        isAdmin: user.is_admin === 1,
        createdAt: user.created_at,
        mfa: mfaStatus,
        orgs: memberships.map((m) => ({
          id: m.id,
          type: "org",
          name: m.handle,
          fullname: m.fullname,
          plan: m.plan,
          roleInOrg: m.role,
          joinedAt: m.joined_at,
        })),
        repositoryCounts: {
          models: count("model"),
          datasets: count("dataset"),
          spaces: count("space"),
          mcps: count("mcp"),
        },
        profile,
        socialIdentities: linked,
        reservedUsernames: reservations.map((r) => ({ name: r.handle, reservedUntil: r.reserved_until })),
        avatarUrl: profile.avatarUrl,
        auth: {
          type: credential.type,
          tokenId: credential.type === "access_token" ? credential.tokenId : null,
          reauthenticatedUntil:
            reauthenticatedUntil && reauthenticatedUntil > clock()
              ? reauthenticatedUntil.toISOString()
              : null,
        },
      };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
