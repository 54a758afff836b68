import { fail } from "@sveltejs/kit";
import QRCode from "qrcode";
import type { MfaRecoveryCodes, MfaStatus, TotpEnrollment } from "@hub/api";
import { ApiFailure, call } from "$lib/server/api";
import { needsReauthentication, reauthenticate } from "$lib/server/reauth";
import type { Actions, PageServerLoad } from "./$types";

/** The viewer's two-factor status (`GET /api/me/mfa`). */
export const load: PageServerLoad = async ({ fetch }) => {
  const { data } = await call<MfaStatus>(fetch, "/api/me/mfa");
  return { mfa: data };
};

/**
 * What the page needs to show a started enrollment: the otpauth URI as a QR code (an SVG drawn here on the
 * server, shown as an image so no markup from outside reaches the page) and the secret to type in by hand.
 */
async function enrollment(otpauthUri: string) {
  const secret = new URL(otpauthUri).searchParams.get("secret") ?? "";
  const svg = await QRCode.toString(otpauthUri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return {
    otpauthUri,
    secret,
    qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`,
  };
}

/** A refused action: the reauthentication prompt, or the API's message. */
function refused(err: unknown, extra: Record<string, unknown> = {}) {
  if (needsReauthentication(err)) return fail(401, { reauth: true as const });
  if (err instanceof ApiFailure && err.status < 500)
    return fail(err.status, { message: err.message, ...extra });
  throw err;
}

export const actions: Actions = {
  reauthenticate,

  /** Starts an enrollment (`POST /api/me/mfa/totp`): a new secret, shown only in this answer. */
  start: async ({ fetch }) => {
    try {
      const { data } = await call<TotpEnrollment>(fetch, "/api/me/mfa/totp", { method: "POST" });
      return { enrollment: await enrollment(data.otpauthUri) };
    } catch (err) {
      return refused(err);
    }
  },

  /**
   * Confirms the enrollment with the app's code (`POST /api/me/mfa/totp/confirm`), which turns two-factor on
   * and answers the recovery codes, shown this once. A refused code keeps the QR code on the page: the URI
   * comes back in the form, since the hub shows the secret only when the enrollment starts.
   */
  confirm: async ({ request, fetch }) => {
    const form = await request.formData();
    const otp = String(form.get("otp") ?? "").replace(/\s+/g, "");
    const uri = String(form.get("otpauth_uri") ?? "");
    const again = uri.startsWith("otpauth://totp/") ? { enrollment: await enrollment(uri) } : {};
    try {
      const { data } = await call<MfaRecoveryCodes>(fetch, "/api/me/mfa/totp/confirm", {
        method: "POST",
        body: JSON.stringify({ otp }),
      });
      return { enabled: true as const, recoveryCodes: data.recoveryCodes };
    } catch (err) {
      return refused(err, again);
    }
  },

  /** New recovery codes (`POST /api/me/mfa/recovery-codes`); the old ones stop working. */
  regenerate: async ({ fetch }) => {
    try {
      const { data } = await call<MfaRecoveryCodes>(fetch, "/api/me/mfa/recovery-codes", { method: "POST" });
      return { recoveryCodes: data.recoveryCodes };
    } catch (err) {
      return refused(err);
    }
  },

  /** Turns two-factor off, or drops an unconfirmed enrollment (`DELETE /api/me/mfa`). */
  disable: async ({ fetch }) => {
    try {
      await call(fetch, "/api/me/mfa", { method: "DELETE" });
      return { disabled: true as const };
    } catch (err) {
      return refused(err);
    }
  },
};
