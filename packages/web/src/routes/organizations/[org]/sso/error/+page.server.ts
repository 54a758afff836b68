import type { PageServerLoad } from "./$types";

/** What the page says for each code the sign-in's callback may send here; only these, never text from the URL. */
const MESSAGES: Record<string, string> = {
  sso_state_invalid:
    "This sign-in is unknown, already finished, expired, or was started by another account. Start it again.",
  sso_denied:
    "The identity provider refused the sign-in. Start it again, or ask the provider's administrators.",
  sso_id_token_rejected:
    "The identity provider's answer was refused. Sign in again; if it keeps failing, ask an admin of the organization to check its single sign-on settings.",
  sso_email_domain:
    "Your identity provider account is not in the organization's email domain. Sign in to the provider with your organization's account.",
  sso_identity_in_use:
    "This identity provider account already signs another hub account in to the organization. Sign in to the provider as yourself.",
  sso_identity_mismatch:
    "Your hub account signs in to the organization as another identity provider account. Sign in to the provider as that one, or ask an admin to remove you from the organization and add you again.",
  sso_not_configured: "The organization has no single sign-on.",
  sso_provider_error:
    "The identity provider could not be reached, or its answer could not be used. Try again later; if it keeps failing, ask an admin of the organization.",
  unauthenticated: "Sign in to the hub first, then start the single sign-on again.",
  forbidden: "Only the organization's members sign in with its single sign-on.",
  not_found: "There is no such organization, or you may not see it.",
  rate_limited: "Too many requests. Wait a minute, then start again.",
  validation_failed: "The identity provider's answer was incomplete. Start the sign-in again.",
};

const UNKNOWN =
  "The single sign-on did not finish. Start it again; if it keeps failing, ask an admin of the organization.";

/**
 * Where a browser lands when an organization's SSO sign-in fails (`GET …/sso/login` or `…/sso/callback` with
 * Accept: text/html): the code in the query picks one of the messages above, and a link starts again.
 */
export const load: PageServerLoad = ({ params, url }) => {
  const code = url.searchParams.get("code") ?? "";
  const known = Object.hasOwn(MESSAGES, code);
  const start = `/api/organizations/${encodeURIComponent(params.org)}/sso/login`;
  return {
    org: params.org,
    code: known ? code : null,
    message: known ? (MESSAGES[code] ?? UNKNOWN) : UNKNOWN,
    start,
    signIn: code === "unauthenticated" ? `/login?next=${encodeURIComponent(start)}` : null,
  };
};
