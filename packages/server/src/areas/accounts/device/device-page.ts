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

/**
 * The web site's look (packages/web/src/app.css: its colour variables, light and dark, and fonts, and its
 * header), in this page's one stylesheet, allowed by its hash: the page loads nothing else.
 */
const STYLE = [
  ":root{--bg:#fff;--bg-soft:#f6f7f9;--fg:#111827;--fg-soft:#4b5563;--border:#e5e7eb;--accent:#b45309;--link:#1d4ed8;--danger:#b91c1c;--radius:8px;",
  'color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}',
  "@media (prefers-color-scheme:dark){:root{--bg:#0b0f19;--bg-soft:#111827;--fg:#f3f4f6;--fg-soft:#9ca3af;--border:#1f2937;--accent:#fbbf24;--link:#93c5fd;--danger:#f87171}}",
  "*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);line-height:1.5}",
  "a{color:var(--link)}:focus-visible{outline:2px solid var(--accent);outline-offset:2px}",
  ".skip{position:absolute;left:.5rem;top:-3rem;padding:.4rem .8rem;background:var(--bg);border:1px solid var(--border);border-radius:var(--radius)}.skip:focus{top:.5rem}",
  "header{border-bottom:1px solid var(--border)}header nav{max-width:1280px;margin:0 auto;padding:.6rem 1rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap}",
  ".brand{display:inline-flex;gap:.4rem;align-items:center;font-weight:700;font-size:1.1rem;color:var(--fg);text-decoration:none}",
  "header ul{display:flex;gap:.9rem;list-style:none;margin:0 0 0 auto;padding:0}header ul a{color:var(--fg);text-decoration:none}header ul a:hover{text-decoration:underline}",
  "main{max-width:34rem;margin:0 auto;padding:2rem 1rem 4rem}main:focus{outline:none}h1{font-size:1.4rem;line-height:1.25}",
  "label{display:block;margin:.6rem 0}input,button{font:inherit;color:inherit}",
  "input[type=text],input[type=password]{display:block;width:100%;margin-top:.2rem;padding:.45rem .65rem;background:var(--bg);border:1px solid var(--border);border-radius:var(--radius)}",
  "button{padding:.4rem 1.2rem;margin:.8rem .6rem 0 0;background:var(--bg-soft);border:1px solid var(--border);border-radius:var(--radius);cursor:pointer}",
  "button[value=approve],form>button:only-of-type{background:var(--fg);color:var(--bg);border-color:var(--fg)}",
  ".error{color:var(--danger);border-left:4px solid var(--danger);padding-left:.6rem}",
  ".code{font:600 1.3rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.1em}.muted{color:var(--fg-soft);font-size:.9rem}",
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

/** The site's logo (packages/web/static/favicon.svg) inline, since the page's policy loads no image. */
const LOGO =
  '<svg aria-hidden="true" width="24" height="24" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#f59e0b"/><path d="M9 8v16M23 8v16M9 16h14" stroke="#1f2937" stroke-width="3.5" stroke-linecap="round"/></svg>';

/** The web site's header: its brand and the same main links. */
const HEADER = `<a class="skip" href="#content">Skip to content</a>
<header><nav aria-label="Main"><a class="brand" href="/">${LOGO} Hub</a>
<ul><li><a href="/models">Models</a></li><li><a href="/datasets">Datasets</a></li><li><a href="/spaces">Spaces</a></li></ul></nav></header>`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)} · Hub</title><style>${STYLE}</style></head>
<body>${HEADER}
<main id="content" tabindex="-1"><h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>`;
}

const errorLine = (error: string | undefined) =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "";

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;

/** The device sign-in pages: server-rendered HTML in the web site's look, with no script. */
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
