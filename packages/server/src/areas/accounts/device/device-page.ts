import { createHash } from "node:crypto";
import { escapeHtml } from "../../../http/html.js";
import type { Scope } from "@hub/api";
import { ROLE_SCOPES } from "../../../auth/scopes.js";
import type { DeviceRequest } from "./device.service.js";

/** What each scope allows, in the spec's words, for the person deciding. */
const SCOPE_MEANINGS: Record<Scope, string> = {
  "repo:read": "read private repositories available to you",
  "repo:write": "create repositories and write files, refs and metadata",
  "repo:delete": "permanently delete repositories",
  "community:write": "create and update discussions, replies, reactions, pull requests",
  "jobs:run": "create, inspect, list, cancel and schedule Jobs",
  "inference:run": "list Router models and run Chat, Responses, Embeddings inference",
  "account:keys": "manage your SSH and GPG public keys",
  "webhooks:manage": "manage webhook routes and delivery receipts",
};

const STYLE = [
  "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1f2328}",
  "h1{font-size:1.4rem}label{display:block;margin:.6rem 0}input[type=text],input[type=password]{display:block;width:100%;padding:.4rem;font:inherit;box-sizing:border-box}",
  "button{font:inherit;padding:.4rem 1.2rem;margin:.8rem .6rem 0 0}.error{color:#b42318;border-left:4px solid #b42318;padding-left:.6rem}",
  ".code{font:600 1.3rem ui-monospace,monospace;letter-spacing:.1em}.muted{color:#57606a;font-size:.9rem}",
].join("");

/**
 * Headers of every page: no script at all, only this page's own stylesheet,
 * forms posting back to the hub only, never framed (clickjacking an Approve button).
 */
export function pageHeaders(): Record<string, string> {
  const styleHash = createHash("sha256").update(STYLE).digest("base64");
  return {
    "content-security-policy": [
      "default-src 'none'",
      `style-src 'sha256-${styleHash}'`,
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "x-frame-options": "DENY",
    // The user code is in the URL; it should not travel on to other sites.
    "referrer-policy": "no-referrer",
  };
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Hub</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>`;
}

const errorLine = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;

/** The device sign-in pages: plain server-rendered HTML until the web UI exists. */
export const devicePage = {
  signIn({ userCode, csrf, error }: { userCode: string; csrf: string; error?: string }): string {
    return layout(
      "Sign in to approve a device",
      `${errorLine(error)}
<form method="post" action="/device/sign-in">
${hidden("csrf", csrf)}${userCode ? hidden("user_code", userCode) : ""}
<label>User name or email<input type="text" name="username" autocomplete="username" required autofocus></label>
<label>Password<input type="password" name="password" autocomplete="current-password" required></label>
<label>Two-factor code <span class="muted">(only if two-factor authentication is on: the 6-digit code your app shows, or a recovery code)</span><input type="text" name="otp" autocomplete="one-time-code" spellcheck="false" maxlength="64"></label>
<button type="submit">Sign in</button>
</form>`,
    );
  },

  enterCode({ handle, userCode, error }: { handle: string; userCode: string; error?: string }): string {
    return layout(
      "Connect a device",
      `<p class="muted">Signed in as ${escapeHtml(handle)}.</p>
${errorLine(error)}
<form method="get" action="/device">
<label>The code your terminal shows<input type="text" name="user_code" value="${escapeHtml(userCode)}" placeholder="ABCD-EFGH" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus></label>
<button type="submit">Continue</button>
</form>`,
    );
  },

  approve({
    handle,
    request,
    csrf,
    error,
  }: {
    handle: string;
    request: DeviceRequest;
    csrf: string;
    error?: string;
  }): string {
    const { grant } = request;
    const what =
      "role" in grant
        ? `<p>It asks for the <strong>${escapeHtml(grant.role)}</strong> role, which allows it to:</p>
<ul>${ROLE_SCOPES[grant.role].map((scope) => `<li>${escapeHtml(SCOPE_MEANINGS[scope])} (${escapeHtml(scope)})</li>`).join("")}</ul>`
        : `<p>It asks for these scopes; uncheck any you do not want to give (at least one must stay):</p>
${grant.scopes
  .map(
    (scope) =>
      `<label><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked> <strong>${escapeHtml(scope)}</strong>: ${escapeHtml(SCOPE_MEANINGS[scope])}</label>`,
  )
  .join("\n")}`;
    return layout(
      "Approve this device?",
      `<p class="muted">Signed in as ${escapeHtml(handle)}.</p>
${errorLine(error)}
<p><strong>${escapeHtml(request.clientId)}</strong> asks for a token to act as ${escapeHtml(handle)}.
Approve only if you started this sign-in yourself and your terminal shows this code:</p>
<p class="code">${escapeHtml(request.userCode)}</p>
<form method="post" action="/device">
${hidden("csrf", csrf)}${hidden("user_code", request.userCode)}
${what}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    );
  },

  approved({ clientId, handle }: { clientId: string; handle: string }): string {
    return layout(
      "Device connected",
      `<p>${escapeHtml(clientId)} is now signed in as ${escapeHtml(handle)}. You can return to your terminal.</p>
<p class="muted">The token shows in your token list, where you can revoke it.</p>`,
    );
  },

  denied({ clientId }: { clientId: string }): string {
    return layout(
      "Sign-in denied",
      `<p>${escapeHtml(clientId)} was denied and got no access. Your terminal will say the sign-in was denied; you can close this page.</p>`,
    );
  },

  message({ title, message }: { title: string; message: string }): string {
    return layout(title, `${errorLine(message)}<p><a href="/device">Start again</a></p>`);
  },
};
