import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { REPO_TYPES, type RepoType } from "@hub/api";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticate } from "../../auth/authenticate.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { Principal } from "../../auth/credential.js";
import { HubError } from "../../errors.js";
import { URL_PREFIX, type FoundRepo, type RepoLookup } from "../../domain/repositories.js";
import { gitEnvironment } from "../git-command.js";
import { repoGate, withoutGitSuffix } from "../repo-gate.js";
import type { RepoStorage } from "../repo-storage.js";

/** The two smart HTTP services and the access each needs (https://git-scm.com/docs/http-protocol); fetching is downloading, which a gated repository guards. */
const SERVICES = {
  "git-upload-pack": { command: "upload-pack", action: "repo:download" },
  "git-receive-pack": { command: "receive-pack", action: "repo:write" },
} as const;
type Service = keyof typeof SERVICES;

/** Gitea's rule for what may pass from the Git-Protocol header into GIT_PROTOCOL. */
const GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

const NO_CACHE = {
  "cache-control": "no-cache, max-age=0, must-revalidate",
  expires: "Fri, 01 Jan 1980 00:00:00 GMT",
  pragma: "no-cache",
};

function pktLine(text: string): string {
  return `${(text.length + 4).toString(16).padStart(4, "0")}${text}`;
}

function isService(value: unknown): value is Service {
  return typeof value === "string" && Object.hasOwn(SERVICES, value);
}

export interface SmartHttpDeps {
  repos: RepoLookup;
  storage: RepoStorage;
  authenticate: Authenticate;
  authorize: Authorize;
  maxGitBlobBytes: number;
}

interface Admitted {
  repo: FoundRepo;
  principal: Principal | null;
}

interface RepoParams {
  owner: string;
  repo: string;
}

/**
 * Git smart HTTP: `info/refs`, `git-upload-pack` and `git-receive-pack` for
 * every repository kind, served by git's own programs with `--stateless-rpc`
 * and streamed both ways with backpressure. Errors are plain text, which git
 * prints to the user as `remote:` lines.
 */
export function smartHttpRoutes({
  repos,
  storage,
  authenticate,
  authorize,
  maxGitBlobBytes,
}: SmartHttpDeps): FastifyPluginAsync {
  const gate = repoGate(repos, authorize);
  /** Sends an error the way git shows it; 401 challenges for Basic credentials so git prompts. */
  function refuse(reply: FastifyReply, error: HubError): FastifyReply {
    const headers: Record<string, string> = { ...error.headers, "content-type": "text/plain; charset=utf-8" };
    if (error.status === 401) headers["www-authenticate"] = 'Basic realm="Hub"';
    return reply.status(error.status).headers(headers).send(`${error.message}\n`);
  }

  /** The repository and caller if the caller may use the service on it; otherwise the refusal is sent and null returned. */
  async function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    type: RepoType,
    service: Service,
  ): Promise<Admitted | null> {
    const { owner, repo } = request.params as RepoParams;
    const name = withoutGitSuffix(repo);
    try {
      const principal = await authenticate(request.headers);
      return {
        principal,
        repo: await gate(principal, { type, owner, name }, SERVICES[service].action, request.url),
      };
    } catch (err) {
      if (!(err instanceof HubError)) throw err;
      const message =
        err.status === 404
          ? `Repository ${owner}/${name} was not found, or your token may not see it.`
          : err.status === 403 && service === "git-receive-pack"
            ? `You may not push to ${owner}/${name}: ${err.message}`
            : err.message;
      refuse(reply, new HubError(err.status, err.code, message, { headers: err.headers }));
      return null;
    }
  }

  /**
   * Runs one git service in the repository, streaming `input` (if any) in and
   * its output to the client. A push's response ends only once the refs it
   * updated are recorded, so a push git reports done has its webhook deliveries.
   */
  async function run(
    request: FastifyRequest,
    reply: FastifyReply,
    { repo, principal }: Admitted,
    service: Service,
    contentType: string,
    input: { body: Readable; gzip: boolean } | null,
    preamble = "",
  ) {
    const protocol = request.headers["git-protocol"];
    const push = service === "git-receive-pack" && input ? storage.pushRecord() : null;
    const env: Record<string, string> = { HUB_MAX_GIT_BLOB_BYTES: String(maxGitBlobBytes), ...push?.env };
    if (typeof protocol === "string" && GIT_PROTOCOL.test(protocol)) env.GIT_PROTOCOL = protocol;
    const args = ["-c", `core.hooksPath=${storage.hooksDir}`, SERVICES[service].command, "--stateless-rpc"];
    if (!input) args.push("--advertise-refs");
    args.push(".");

    reply.hijack();
    const res = reply.raw;
    const child = spawn("git", args, {
      cwd: storage.pathOf(repo.row.id),
      env: gitEnvironment(env),
      stdio: "pipe",
    });
    // An early exit of git surfaces through its status; a broken stdin pipe must not crash the hub.
    child.stdin.on("error", () => {});
    const stderr: Buffer[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    res.once("close", () => {
      if (!res.writableFinished) child.kill("SIGTERM");
    });
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      ...NO_CACHE,
      "content-type": contentType,
    });
    res.write(preamble);
    const exited = new Promise<number | null>((resolve) => {
      child.once("close", resolve);
      // A failed spawn (no git, no processes left, a repository deleted meanwhile) ends this request, not the hub.
      child.once("error", (err) => {
        request.log.error({ err: err.message, service, repo: repo.fullName }, "git could not start");
        res.destroy();
        resolve(null);
      });
    });
    try {
      await Promise.all([
        !input
          ? Promise.resolve(child.stdin.end())
          : input.gzip
            ? pipeline(input.body, createGunzip(), child.stdin)
            : pipeline(input.body, child.stdin),
        pipeline(child.stdout, res, { end: !push }),
      ]);
    } catch (err) {
      request.log.warn(
        { err: (err as Error).message, service, repo: repo.fullName },
        "git transfer interrupted",
      );
      child.kill("SIGTERM");
      res.destroy();
    }
    const code = await exited;
    if (code !== 0) {
      request.log.warn(
        { service, repo: repo.fullName, code, stderr: Buffer.concat(stderr).toString("utf8").slice(0, 2000) },
        "git service failed",
      );
    }
    if (push) {
      const updates = await push.updates();
      if (code === 0) await repos.refsUpdated(repo, updates, principal?.handle ?? null);
      res.end();
    }
  }

  return async (app) => {
    app.addContentTypeParser(
      ["application/x-git-upload-pack-request", "application/x-git-receive-pack-request"],
      (_request, payload, done) => done(null, payload),
    );
    const config = { access: "public" as const };

    for (const type of REPO_TYPES) {
      const base = `/${URL_PREFIX[type]}:owner/:repo`;

      app.get(`${base}/info/refs`, { schema: { hide: true }, config }, async (request, reply) => {
        const service = (request.query as { service?: unknown }).service;
        if (!isService(service)) {
          return refuse(
            reply,
            new HubError(
              403,
              "dumb_http_unsupported",
              "Only git's smart HTTP protocol is served; use git 1.6.6 or newer.",
            ),
          );
        }
        const admitted = await admit(request, reply, type, service);
        if (!admitted) return reply;
        const version2 = /(^|:)version=2(:|$)/.test(String(request.headers["git-protocol"] ?? ""));
        const preamble = version2 ? "" : `${pktLine(`# service=${service}\n`)}0000`;
        await run(
          request,
          reply,
          admitted,
          service,
          `application/x-${service}-advertisement`,
          null,
          preamble,
        );
        return reply;
      });

      for (const service of Object.keys(SERVICES) as Service[]) {
        app.post(`${base}/${service}`, { schema: { hide: true }, config }, async (request, reply) => {
          if (request.headers["content-type"] !== `application/x-${service}-request`) {
            return refuse(
              reply,
              new HubError(
                415,
                "unsupported_media_type",
                `Send Content-Type: application/x-${service}-request.`,
              ),
            );
          }
          const admitted = await admit(request, reply, type, service);
          if (!admitted) return reply;
          const input = {
            body: request.body as Readable,
            gzip: request.headers["content-encoding"] === "gzip",
          };
          await run(request, reply, admitted, service, `application/x-${service}-result`, input);
          return reply;
        });
      }
    }
  };
}
