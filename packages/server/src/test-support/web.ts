import path from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { base32Decode, hotp, totpStep } from "../auth/totp.js";

/**
 * What the web tests (app/web*.test.ts, in-process and in Chromium) share: committing files through the API,
 * reading pages and posting forms as a browser without JavaScript does, a Chromium context watched for
 * what a page must never do, screenshots, and two-factor codes.
 */

/** What both test hubs (`startHub`, `startInProcessHub`) offer the helpers here. */
export interface WebHarness {
  readonly url: string;
  readonly secrets: Set<string>;
  request(pathname: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
}

/** The Accept header a browser sends for a page, which the hub answers with the web site. */
export const HTML = { accept: "text/html,application/xhtml+xml" } as const;

/** Screenshots of pages, for people to look at (not compared); git ignores the folder. */
export const SCREENSHOTS = fileURLToPath(new URL("../../../web/screenshots/", import.meta.url));

/** The widths every page is looked at: a phone and a desktop. */
export const WIDTHS = [375, 1440] as const;

/** The hub's origin, as a browser sends it in `Origin`. */
export const originOf = (hub: { url: string }): string => new URL(hub.url).origin;

export interface CommitOptions {
  summary?: string;
  description?: string;
  /** Paths the commit deletes. */
  deleted?: string[];
  /** `models` (the default), `datasets` or `spaces`. */
  kind?: string;
  revision?: string;
}

/** The NDJSON body of a commit through the API: a header line, then a line a file (base64) or deletion. */
export function commitBody(files: Record<string, Buffer | string>, options: CommitOptions = {}): string {
  const { summary = "Add files", description, deleted = [] } = options;
  return [
    { key: "header", value: { summary, ...(description === undefined ? {} : { description }) } },
    ...Object.entries(files).map(([file, content]) => ({
      key: "file",
      value: { path: file, content: Buffer.from(content).toString("base64"), encoding: "base64" },
    })),
    ...deleted.map((file) => ({ key: "deletedFile", value: { path: file } })),
  ]
    .map((line) => JSON.stringify(line))
    .join("\n");
}

/** Commits files to a repository through the NDJSON commit API with a token; fails the test unless 200. */
export async function commitFiles(
  hub: WebHarness,
  token: string | undefined,
  repo: string,
  files: Record<string, Buffer | string>,
  options: CommitOptions = {},
): Promise<Response> {
  const { kind = "models", revision = "main" } = options;
  const response = await hub.request(`/api/${kind}/${repo}/commit/${revision}`, {
    method: "POST",
    token,
    headers: { "content-type": "application/x-ndjson" },
    body: commitBody(files, options),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response;
}

export interface PageOptions {
  /** The browser's cookies (`hub_session=…; hub_csrf=…`); none when absent. */
  cookie?: string;
  /** "manual" to see a redirect instead of following it. */
  redirect?: RequestInit["redirect"];
}

/** A page as a browser asks for it (Accept: text/html), with its cookies. */
export function readPage(hub: WebHarness, pathname: string, options: PageOptions = {}): Promise<Response> {
  const { cookie, redirect } = options;
  return hub.request(pathname, {
    ...(redirect ? { redirect } : {}),
    headers: { ...HTML, ...(cookie ? { cookie } : {}) },
  });
}

/** A page's HTML; fails the test (showing the start of the body) unless it answers with `status`. */
export async function pageText(
  hub: WebHarness,
  pathname: string,
  options: PageOptions & { status?: number } = {},
): Promise<string> {
  const response = await readPage(hub, pathname, options);
  const body = await response.text();
  expect(response.status, `${pathname}: ${body.slice(0, 300)}`).toBe(options.status ?? 200);
  return body;
}

/** A form's fields: URL-encoded unless a FormData (multipart). */
export type FormFields = URLSearchParams | FormData | Record<string, string> | [string, string][];

/**
 * A form post as a browser without JavaScript sends it: from the hub's origin, with the cookies, not following
 * the redirect. It carries no X-CSRF-Token (the header is sent empty so the harness adds none): the page,
 * not the test, must add the request-forgery token to its API calls.
 */
export function postForm(
  hub: WebHarness,
  pathname: string,
  fields: FormFields,
  options: { cookie?: string; origin?: string } = {},
): Promise<Response> {
  const multipart = fields instanceof FormData;
  return hub.request(pathname, {
    method: "POST",
    redirect: "manual",
    headers: {
      ...HTML,
      origin: options.origin ?? originOf(hub),
      "x-csrf-token": "",
      ...(multipart ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      ...(options.cookie ? { cookie: options.cookie } : {}),
    },
    body: multipart ? fields : new URLSearchParams(fields).toString(),
  });
}

/**
 * Collects into `problems` what a page must never do: open a dialog (dismissed), log a console error, throw.
 */
export function watchPage(page: Page, problems: string[]): void {
  page.on("dialog", (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
}

/**
 * Waits until the page's scripts have taken over (the root layout marks the document once mounted). A form sent
 * before that goes out as a plain HTML form, as it should; but a refusal then comes back as a document with its
 * 4xx status, which the browser logs as a console error: tests that submit refused forms on purpose wait first.
 */
export async function hydrated(page: Page): Promise<void> {
  await page.locator("html[data-hydrated]").waitFor({ state: "attached" });
}

export interface WatchedContext {
  context: BrowserContext;
  /** Dialogs, console errors, page errors and requests to any origin but the hub's (data: URLs aside). */
  problems: string[];
}

/**
 * A fresh browser context at `width` × 900 whose every page is watched (`watchPage`) and whose requests to
 * any other origin than the hub's are problems too.
 */
export async function watchedContext(
  browser: Browser,
  hub: { url: string },
  width: number,
  options: { colorScheme?: "light" | "dark" } = {},
): Promise<WatchedContext> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, ...options });
  const problems: string[] = [];
  const origin = originOf(hub);
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.origin !== origin) problems.push(`request to ${url.href}`);
  });
  context.on("page", (page) => watchPage(page, problems));
  return { context, problems };
}

/** `watchedContext` with its first page open. */
export async function watchedPage(
  browser: Browser,
  hub: { url: string },
  width: number,
): Promise<WatchedContext & { page: Page }> {
  const watched = await watchedContext(browser, hub, width);
  return { ...watched, page: await watched.context.newPage() };
}

/** Signs in on the sign-in page the browser is on. */
export async function signInOnPage(page: Page, name: string, password: string): Promise<void> {
  await page.getByLabel("User name or email").fill(name);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A full-page screenshot into SCREENSHOTS as `<name>-<width>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${name}-${page.viewportSize()?.width}.png`),
    fullPage: true,
  });
}

/** A full-page screenshot at each of WIDTHS, back at the page's own size after. */
export async function screenshotAtWidths(page: Page, name: string): Promise<void> {
  const before = page.viewportSize() ?? { width: 1440, height: 900 };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(before);
}

/** The code an authenticator app shows now for a base32 TOTP secret. */
export function totpNow(secret: string): string {
  return hotp(base32Decode(secret), totpStep(Date.now()));
}

/**
 * An authenticator app that never offers the same code twice: the hub accepts a step either side of now but
 * each step only once, so `next()` waits for a fresh step when it has used them up.
 */
export class TotpCodes {
  private lastStep = Number.NEGATIVE_INFINITY;

  constructor(private readonly secret: string) {}

  async next(): Promise<string> {
    for (;;) {
      const now = totpStep(Date.now());
      const step = Math.max(now - 1, this.lastStep + 1);
      if (step <= now + 1) {
        this.lastStep = step;
        return hotp(base32Decode(this.secret), step);
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** A real PNG image of one pixel of the colour `[red, green, blue]`. */
export function onePixelPng([red, green, blue]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.from([0, red, green, blue]))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
