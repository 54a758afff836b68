import { createHash } from "node:crypto";
import type {
  OrganizationSso,
  OrganizationSsoPrompts,
  SsoAuthorization,
  SsoCallbackQuery,
  UpdateOrganizationSso,
} from "@hub/api";
import type { Principal } from "../../../auth/credential.js";
import type { Sealer } from "../../../auth/sealed-secret.js";
import { hashSecret, randomBase62 } from "../../../auth/secrets.js";
import type { Db } from "../../../db/database.js";
import type { OrganizationRow, OrganizationSsoRow } from "../../../db/schema.js";
import { HubError, badRequest, forbidden } from "../../../errors.js";
import { IdTokenRejected, verifyIdToken, type IdTokenClaims } from "./id-token.js";
import { providerUrlProblem, type OpenIdClient } from "./openid-client.js";
import { ssoRepository } from "./sso.repository.js";
import { ssoSignInUrl, ssoStanding } from "../../../auth/sso-standing.js";

/** How long a sign-in started at the provider can be finished. */
const LOGIN_TTL_MS = 10 * 60 * 1000;

const notConfigured = (org: OrganizationRow) =>
  new HubError(
    404,
    "sso_not_configured",
    `The organization ${org.handle} has no single sign-on; an admin sets it with PUT /api/organizations/${org.handle}/sso.`,
  );

/**
 * Organization single sign-on with OpenID Connect: admins configure the
 * provider (its client secret sealed), members sign in with the authorization
 * code flow and PKCE (state and nonce bound to the account that started it),
 * the verified ID token becomes an SSO sign-in that lasts the configured time,
 * and the prompts list the organizations whose sign-in a member lacks.
 */
export function createSsoService({
  db,
  clock,
  openid,
  secrets,
  verifiers,
  publicUrl,
  allowPrivate,
  defaultSessionSeconds,
}: {
  db: Db;
  clock: () => Date;
  openid: OpenIdClient;
  /** Seals client secrets. */
  secrets: Sealer;
  /** Seals the PKCE verifiers of sign-ins under way. */
  verifiers: Sealer;
  publicUrl: string;
  allowPrivate: boolean;
  defaultSessionSeconds: number;
}) {
  const redirectUri = (org: OrganizationRow) => `${publicUrl}/api/organizations/${org.handle}/sso/callback`;

  function present(org: OrganizationRow, row: OrganizationSsoRow | undefined): OrganizationSso {
    return {
      organization: org.handle,
      configured: row !== undefined,
      issuer: row?.issuer ?? null,
      clientId: row?.client_id ?? null,
      clientSecretSet: row !== undefined,
      emailDomain: row?.email_domain ?? null,
      required: row?.required === 1,
      sessionSeconds: row?.session_seconds ?? null,
      effectiveSessionSeconds: row?.session_seconds ?? defaultSessionSeconds,
      redirectUri: redirectUri(org),
      signInUrl: ssoSignInUrl(publicUrl, org.handle),
      updatedAt: row?.updated_at ?? null,
    };
  }

  async function requireConfig(org: OrganizationRow): Promise<OrganizationSsoRow> {
    const row = await ssoRepository.find(db, org.id);
    if (!row) throw notConfigured(org);
    return row;
  }

  return {
    /** The organization's SSO configuration as its admins see it, without the client secret. */
    async settings(org: OrganizationRow): Promise<OrganizationSso> {
      return present(org, await ssoRepository.find(db, org.id));
    },

    /**
     * Replaces the configuration. A new issuer, client or email domain
     * forgets every SSO sign-in made with the old one.
     */
    async update(org: OrganizationRow, input: UpdateOrganizationSso): Promise<OrganizationSso> {
      const problem = providerUrlProblem(input.issuer, allowPrivate);
      if (problem) throw badRequest("invalid_issuer", `The issuer is refused: ${problem}.`, "issuer");
      if (new URL(input.issuer).search) {
        throw badRequest("invalid_issuer", "The issuer may not carry a query string.", "issuer");
      }
      const saved = await db.transaction().execute(async (tx) => {
        const current = await ssoRepository.find(tx, org.id);
        if (!input.clientSecret && !current) {
          throw badRequest(
            "client_secret_required",
            "Send the clientSecret the provider gave the hub; it is needed the first time only.",
            "clientSecret",
          );
        }
        const row: OrganizationSsoRow = {
          organization_id: org.id,
          issuer: input.issuer,
          client_id: input.clientId,
          sealed_client_secret: input.clientSecret
            ? secrets.seal(input.clientSecret)
            : (current?.sealed_client_secret ?? ""),
          email_domain: input.emailDomain?.toLowerCase() ?? null,
          required: input.required ? 1 : 0,
          session_seconds: input.sessionSeconds ?? null,
          updated_at: clock().toISOString(),
        };
        const sameProvider =
          current?.issuer === row.issuer &&
          current.client_id === row.client_id &&
          current.email_domain === row.email_domain;
        if (current && !sameProvider) await ssoRepository.forgetSignIns(tx, org.id);
        await ssoRepository.save(tx, row);
        return row;
      });
      return present(org, saved);
    },

    /** Removes single sign-on from the organization, with every SSO sign-in made with it. */
    async remove(org: OrganizationRow): Promise<void> {
      await requireConfig(org);
      await db.transaction().execute(async (tx) => {
        await ssoRepository.forgetSignIns(tx, org.id);
        await ssoRepository.remove(tx, org.id);
      });
    },

    /**
     * Starts a sign-in: records its state (hashed), nonce (hashed) and PKCE
     * verifier (sealed) for the account, and returns the provider's
     * authorization URL to send the browser to.
     */
    async startLogin(org: OrganizationRow, principal: Principal): Promise<string> {
      const config = await requireConfig(org);
      const provider = await openid.discover(config.issuer);
      const state = randomBase62(43);
      const nonce = randomBase62(43);
      const verifier = randomBase62(64);
      const now = clock();
      await ssoRepository.pruneLogins(db, now.toISOString());
      await ssoRepository.startLogin(db, {
        state_hash: hashSecret(state),
        organization_id: org.id,
        user_id: principal.userId,
        nonce_hash: hashSecret(nonce),
        sealed_code_verifier: verifiers.seal(verifier),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + LOGIN_TTL_MS).toISOString(),
      });
      const url = new URL(provider.authorizationEndpoint);
      const params = {
        response_type: "code",
        client_id: config.client_id,
        redirect_uri: redirectUri(org),
        scope: "openid email profile",
        state,
        nonce,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
      };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return url.href;
    },

    /**
     * Finishes a sign-in the caller started: the state must be one the caller
     * started for this organization, unused and recent; the code is exchanged
     * and the ID token verified; the SSO sign-in is recorded.
     */
    async finishLogin(
      org: OrganizationRow,
      principal: Principal,
      query: SsoCallbackQuery,
    ): Promise<SsoAuthorization> {
      const now = clock();
      const login = await ssoRepository.takeLogin(db, hashSecret(query.state), org.id, principal.userId);
      if (!login || Date.parse(login.expires_at) <= now.getTime()) {
        throw badRequest(
          "sso_state_invalid",
          `This sign-in is unknown, already finished, expired, or was started by another account; start again at ${ssoSignInUrl(publicUrl, org.handle)}.`,
          "state",
        );
      }
      const config = await requireConfig(org);
      if (query.error !== undefined) {
        const detail = query.error_description ? ` (${query.error_description})` : "";
        throw forbidden("sso_denied", `The identity provider refused the sign-in: ${query.error}${detail}.`);
      }
      if (query.code === undefined) {
        throw badRequest("validation_failed", 'The querystring field "code" is required.', "code");
      }
      const refused = (what: string, reason: string) =>
        new HubError(
          403,
          "sso_id_token_rejected",
          `The identity provider's ${what} was refused: ${reason}. Sign in again; if it keeps failing, ask an admin of ${org.handle} to check its SSO settings.`,
        );
      if (query.iss !== undefined && query.iss !== config.issuer) {
        throw refused("answer", `it came from ${query.iss}, not ${config.issuer} (RFC 9207)`);
      }
      const provider = await openid.discover(config.issuer);
      const idToken = await openid.exchangeCode(provider, {
        clientId: config.client_id,
        clientSecret: secrets.open(config.sealed_client_secret),
        code: query.code,
        redirectUri: redirectUri(org),
        codeVerifier: verifiers.open(login.sealed_code_verifier),
      });
      const keys = await openid.keys(provider);
      let claims: IdTokenClaims;
      try {
        claims = verifyIdToken(idToken, keys, {
          issuer: config.issuer,
          clientId: config.client_id,
          nonceHash: login.nonce_hash,
          now,
          emailDomain: config.email_domain,
        });
      } catch (err) {
        if (!(err instanceof IdTokenRejected)) throw err;
        if (err.reason === "email_domain") {
          throw forbidden(
            "sso_email_domain",
            `The ID token was refused: ${err.message}. Sign in to the provider with your ${config.email_domain} account.`,
          );
        }
        throw refused("ID token", err.message);
      }
      const linked = await ssoRepository.linkedIdentities(db, org.id, principal.userId, claims.subject);
      if (linked.some((identity) => identity.user_id !== principal.userId)) {
        throw forbidden(
          "sso_identity_in_use",
          `This identity provider account already signs another hub account in to ${org.handle}; sign in to the provider as yourself.`,
        );
      }
      if (linked.some((identity) => identity.subject !== claims.subject)) {
        throw forbidden(
          "sso_identity_mismatch",
          `Your hub account signs in to ${org.handle} as another identity provider account; sign in to the provider as that one, or ask an admin to remove you from the organization and add you again.`,
        );
      }
      const expiresAt = new Date(now.getTime() + (config.session_seconds ?? defaultSessionSeconds) * 1000);
      const row = {
        organization_id: org.id,
        user_id: principal.userId,
        subject: claims.subject,
        email: claims.email,
        signed_in_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
      };
      await ssoRepository.saveAuthorization(db, row);
      return {
        organization: org.handle,
        subject: row.subject,
        email: row.email,
        signedInAt: row.signed_in_at,
        expiresAt: row.expires_at,
      };
    },

    /** The caller's organizations that require SSO where the caller has no valid sign-in, by handle. */
    async prompts(principal: Principal): Promise<OrganizationSsoPrompts> {
      const now = clock();
      const organizations = (await ssoRepository.requiredOfUser(db, principal.userId)).flatMap((org) => {
        const standing = ssoStanding(org, org.handle, now, publicUrl);
        if (!standing || standing.state === "valid") return [];
        return [
          {
            name: org.handle,
            fullname: org.fullname,
            reason: standing.state,
            expiredAt: standing.state === "expired" ? org.expires_at : null,
            signInUrl: standing.signInUrl,
          },
        ];
      });
      return { organizations };
    },
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
