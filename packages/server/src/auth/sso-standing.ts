import type { SsoStanding } from "./authorize.js";

/** Where a member starts an SSO sign-in with the organization's provider. */
export function ssoSignInUrl(publicUrl: string, organization: string): string {
  return `${publicUrl}/api/organizations/${organization}/sso/login`;
}

/**
 * A member's SSO standing from what the database holds: null when the
 * organization requires no SSO; otherwise valid until the sign-in expires.
 */
export function ssoStanding(
  stored: { required: number | null; expires_at: string | null },
  organization: string,
  now: Date,
  publicUrl: string,
): SsoStanding | null {
  if (stored.required !== 1) return null;
  const state =
    stored.expires_at === null
      ? "missing"
      : Date.parse(stored.expires_at) > now.getTime()
        ? "valid"
        : "expired";
  return { organization, state, signInUrl: ssoSignInUrl(publicUrl, organization) };
}
