import { createReadStream, existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { HubError } from "../errors.js";
import { renderHubError } from "../http/error-handler.js";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** What the hub needs of SvelteKit's built server (`@sveltejs/kit`'s `Server`). */
interface KitServer {
  init(options: { env: Record<string, string> }): Promise<void>;
  respond(
    request: Request,
    options: { getClientAddress(): string; platform: { hub(request: Request): Promise<Response> } },
  ): Promise<Response>;
}

interface StaticFile {
  file: string;
  type: string;
  immutable: boolean;
  encodings: { br: boolean; gzip: boolean };
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** The longest path segment the API's routes take (Fastify's `maxParamLength`). */
const MAX_API_SEGMENT = 100;

/** Form posts to pages are small; uploads go to the API. The page TOO_LARGE_PAGE names this limit. */
export const FORM_BODY_LIMIT = 1024 * 1024;

/** Headers that describe a request's body, left out when SvelteKit is asked for a page without one. */
const BODY_HEADERS = new Set(["content-type", "content-length", "transfer-encoding"]);

/** The site's page for a form post over FORM_BODY_LIMIT (`packages/web/src/routes/_hub/request-too-large`). */
const TOO_LARGE_PAGE = "/_hub/request-too-large";

/** Where `packages/web` keeps its build, or null when it has not been built. */
function webBuildDir(): string | null {
  try {
    const dir = path.join(
      path.dirname(createRequire(import.meta.url).resolve("@hub/web/package.json")),
      "build",
    );
    return existsSync(path.join(dir, "server", "index.js")) ? dir : null;
  } catch {
    return null;
  }
}

/** Every file of the client build by its URL path; nothing outside it can be named. */
function staticFiles(clientDir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!/\.(br|gz)$/.test(entry.name)) {
        const url = `/${path.relative(clientDir, full).split(path.sep).join("/")}`;
        files.set(url, {
          file: full,
          type: TYPES[path.extname(entry.name)] ?? "application/octet-stream",
          immutable: url.startsWith("/_app/immutable/"),
          encodings: { br: existsSync(`${full}.br`), gzip: existsSync(`${full}.gz`) },
        });
      }
    }
  };
  walk(clientDir);
  return files;
}

/** Whether a request is a person's browser asking for a page (or a page's form post), not an API client. */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method === "POST") {
    return /^(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)/i.test(
      request.headers["content-type"] ?? "",
    );
  }
  return /\btext\/html\b/i.test(request.headers.accept ?? "") || request.url.includes("/__data.json");
}

/**
 * The page's Content-Security-Policy with the Router's public origin added to `connect-src`, so the
 * playground can stream from the Router in the browser. SvelteKit's policy is fixed at build time
 * (svelte.config.js) while the Router's address is the operator's, so it is added here, once per page;
 * nothing else in the policy changes.
 */
export function allowRouterConnections(policy: string, routerOrigin: string): string {
  const directives = policy.split(";").map((directive) => directive.trim());
  const index = directives.findIndex((directive) => /^connect-src(\s|$)/.test(directive));
  if (index < 0) return policy;
  const sources = directives[index]?.split(/\s+/) ?? [];
  if (sources.includes(routerOrigin)) return policy;
  directives[index] = [...sources, routerOrigin].join(" ");
  return directives.filter((directive) => directive !== "").join("; ");
}

/** The URL paths of pages, in the Hugging Face Hub's shapes; API and git routes keep precedence over them. */
const PAGE_PATHS = [
  "/",
  "/models",
  "/datasets",
  "/spaces",
  "/login",
  "/logout",
  "/new",
  "/settings",
  "/settings/*",
  "/organizations/*",
  "/__data.json",
  "/:owner",
  "/:owner/:repo",
  "/:owner/:repo/*",
  "/datasets/:owner/:repo",
  "/datasets/:owner/:repo/*",
  "/spaces/:owner/:repo",
  "/spaces/:owner/:repo/*",
];

/**
 * The web site (`packages/web`, SvelteKit) on the Hub listener. Pages render on the server; what they read
 * and write goes through the public API, answered in-process by `inject()` with the browser's own cookie,
 * so a page can do nothing the API would refuse. Paths the API or git own are never shadowed: those routes
 * win, `/api/` is never a page, and a request that does not ask for HTML gets the API's JSON 404.
 */
export async function webRoutes({
  publicUrl,
  routerPublicUrl,
  logger,
}: {
  publicUrl: string;
  /** The Router's public URL, whose origin the pages may connect to (the playground streams from it). */
  routerPublicUrl: string;
  logger: FastifyBaseLogger;
}): Promise<(app: FastifyInstance) => Promise<void>> {
  const dir = webBuildDir();
  if (!dir) {
    logger.warn("The web site is not built (npm run build); the hub serves the API only.");
    return async () => {};
  }
  const { Server } = (await import(pathToImport(path.join(dir, "server", "index.js")))) as {
    Server: new (manifest: unknown) => KitServer;
  };
  const { manifest } = (await import(pathToImport(path.join(dir, "server", "manifest.js")))) as {
    manifest: unknown;
  };
  const server = new Server(manifest);
  await server.init({ env: {} });
  const files = staticFiles(path.join(dir, "client"));
  const origin = new URL(publicUrl).origin;
  const routerOrigin = new URL(routerPublicUrl).origin;

  return async (app) => {
    app.addContentTypeParser(
      ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"],
      { parseAs: "buffer", bodyLimit: FORM_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );

    /** The API's answer to a page's request, made in-process as the browser's own request. */
    async function answerInProcess(request: Request, ip: string): Promise<Response> {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const answer = await app.inject({
        method: request.method as "GET",
        url: url.pathname + url.search,
        headers,
        remoteAddress: ip,
        ...(request.body ? { payload: Buffer.from(await request.arrayBuffer()) } : {}),
      });
      const location = answer.headers.location;
      if (
        answer.statusCode === 302 &&
        request.method === "GET" &&
        typeof location === "string" &&
        /\/resolve\//.test(url.pathname) &&
        new URL(location, origin).origin !== origin
      ) {
        // A file the object store serves itself (a presigned URL, docs/storage.md): read from there, as a client would.
        const range = request.headers.get("range");
        return fetch(location, range ? { headers: { range } } : {});
      }
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(item));
      }
      const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === "HEAD";
      return new Response(empty ? null : answer.rawPayload, {
        status: answer.statusCode,
        headers: responseHeaders,
      });
    }

    /** SvelteKit's answer to a request for `url`, sent as the reply. */
    async function render(
      request: FastifyRequest,
      reply: FastifyReply,
      url: string,
      init: { method: string; body?: Buffer },
    ) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (value === undefined) continue;
        if (!init.body && BODY_HEADERS.has(name)) continue;
        for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
      }
      const response = await server.respond(
        new Request(new URL(url, origin), { method: init.method, headers, body: init.body }),
        {
          getClientAddress: () => request.ip,
          platform: { hub: (inner) => answerInProcess(inner, request.ip) },
        },
      );
      reply.status(response.status);
      response.headers.forEach((value, name) => {
        if (name === "content-security-policy")
          reply.header(name, allowRouterConnections(value, routerOrigin));
        else if (name !== "set-cookie") reply.header(name, value);
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) reply.header("set-cookie", cookies);
      return reply.send(Buffer.from(await response.arrayBuffer()));
    }

    async function page(request: FastifyRequest, reply: FastifyReply) {
      if (request.url.startsWith("/api/")) {
        // The API's own routes refuse an over-long name as 414 before matching; a path that reached the
        // pages' catch-all instead answers the same, then the API's JSON 404.
        const path = request.url.split("?")[0] ?? "";
        if (path.split("/").some((segment) => segment.length > MAX_API_SEGMENT)) {
          throw new HubError(
            414,
            "uri_too_long",
            "A segment of the URL path is longer than the hub accepts; check the names in the URL.",
          );
        }
        return reply.callNotFound();
      }
      if (!wantsPage(request)) return reply.callNotFound();
      const body = request.method === "POST" && Buffer.isBuffer(request.body) ? request.body : undefined;
      return render(request, reply, request.url, { method: request.method, body });
    }

    /**
     * A page's form post over FORM_BODY_LIMIT, refused before it is read, answers with the site's page for it
     * (413, the limit, the upload page instead) rather than the API's JSON; a body of a type no page takes,
     * from anything but a browser, is the JSON 404 of a missing route. Any other error, and anything under
     * /api/, keeps the API's JSON.
     */
    async function pageError(error: HubError, request: FastifyRequest, reply: FastifyReply) {
      // A body of a type no page takes (an API client posting where no route is): that is the answer, not 415.
      if (error.status === 415 && !wantsPage(request)) {
        reply.callNotFound();
        return reply;
      }
      if (error.code !== "request_too_large" || request.url.startsWith("/api/") || !wantsPage(request)) {
        return reply.send(renderHubError(error));
      }
      const from = request.url.split("?")[0] ?? "/";
      return render(request, reply, `${TOO_LARGE_PAGE}?from=${encodeURIComponent(from)}`, { method: "GET" });
    }

    async function asset(request: FastifyRequest, reply: FastifyReply) {
      const file = files.get(request.url.split("?")[0] ?? "");
      if (!file) return reply.callNotFound();
      const accepts = request.headers["accept-encoding"] ?? "";
      const encoding =
        file.encodings.br && /\bbr\b/.test(accepts)
          ? "br"
          : file.encodings.gzip && /\bgzip\b/.test(accepts)
            ? "gzip"
            : null;
      const served = encoding ? `${file.file}.${encoding === "br" ? "br" : "gz"}` : file.file;
      reply
        .header("content-type", file.type)
        .header("content-length", statSync(served).size)
        .header("vary", "accept-encoding")
        .header(
          "cache-control",
          file.immutable ? "public, max-age=31536000, immutable" : "public, max-age=600",
        );
      if (encoding) reply.header("content-encoding", encoding);
      return reply.send(request.method === "HEAD" ? null : createReadStream(served));
    }

    const config = { access: "public" as const, unmetered: true };
    for (const url of PAGE_PATHS) {
      app.route({
        method: ["GET", "HEAD", "POST"],
        url,
        schema: { hide: true },
        config: { ...config, renderError: pageError },
        handler: page,
      });
    }
    app.route({ method: ["GET", "HEAD"], url: "/_app/*", schema: { hide: true }, config, handler: asset });
    for (const url of files.keys()) {
      if (!url.startsWith("/_app/")) {
        app.route({ method: ["GET", "HEAD"], url, schema: { hide: true }, config, handler: asset });
      }
    }
  };
}

/** An absolute file path as an `import()` specifier. */
function pathToImport(file: string): string {
  return new URL(`file://${file}`).href;
}
