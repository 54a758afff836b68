import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { REPO_TYPES, type RepoType } from "@hub/api";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { Authenticate } from "../../auth/authenticate.js";
import type { Authorize } from "../../auth/authorizer.js";
import type { Principal } from "../../auth/credential.js";
import { HubError } from "../../errors.js";
import type { PullRequests } from "../../domain/pull-requests.js";
import { URL_PREFIX, type FoundRepo, type RepoLookup } from "../../domain/repositories.js";
import {
  asksVersion2,
  GIT_SERVICES,
  isGitService,
  type GitService,
  type GitServiceRunner,
} from "../git-service.js";
import type { PushRights } from "../push-rights.js";
import { pushGate, repoGate, requirePushable, withoutGitSuffix } from "../repo-gate.js";

const NO_CACHE = {
  "cache-control": "no-cache, max-age=0, must-revalidate",
  expires: "Fri, 01 Jan 1980 00:00:00 GMT",
  pragma: "no-cache",
};

function pktLine(text: string): string {
  return `${(text.length + 4).toString(16).padStart(4, "0")}${text}`;
}

export interface SmartHttpDeps {
  repos: RepoLookup;
  git: GitServiceRunner;
  authenticate: Authenticate;
  authorize: Authorize;
  pullRequests: Pick<PullRequests, "pushable">;
}

interface Admitted {
  repo: FoundRepo;
  principal: Principal | null;
  /** For receive-pack: what the push may update. */
  rights?: PushRights;
}

interface RepoParams {
  owner: string;
  repo: string;
}

/**
 * Git smart HTTP: `info/refs`, `git-upload-pack` and `git-receive-pack` for
 * every repository kind, served by git's own programs with `--stateless-rpc`
 * and streamed both ways with backpressure. Errors are plain text, which git
 * prints to the user as `remote:` lines. A push's two requests (the ref
 * advertisement and the rpc) each pass the same push door (`pushGate`).
 */
export function smartHttpRoutes({
  repos,
  git,
  authenticate,
  authorize,
  pullRequests,
}: SmartHttpDeps): FastifyPluginAsync {
  const gate = repoGate(repos, authorize);
  const admitPush = pushGate(repos, authorize, pullRequests);
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
    service: GitService,
  ): Promise<Admitted | null> {
    const { owner, repo } = request.params as RepoParams;
    const name = withoutGitSuffix(repo);
    try {
      const principal = await authenticate(request.headers);
      if (service === "git-receive-pack") {
        const admitted = await admitPush(principal, { type, owner, name }, request.url);
        requirePushable(admitted.rights);
        return admitted;
      }
      return {
        principal,
        repo: await gate(principal, { type, owner, name }, GIT_SERVICES[service].action, request.url),
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
    { repo, principal, rights }: Admitted,
    service: GitService,
    contentType: string,
    input: { body: Readable; gzip: boolean } | null,
    preamble = "",
  ) {
    const protocol = request.headers["git-protocol"];
    const session = git.start(repo, service, {
      protocol: typeof protocol === "string" ? protocol : undefined,
      stateless: input ? "rpc" : "advertise",
      actor: principal?.handle ?? null,
      rights,
    });
    const { child } = session;
    const push = service === "git-receive-pack" && input !== null;

    reply.hijack();
    const res = reply.raw;
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
      await session.finish();
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
        if (!isGitService(service)) {
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
        const version2 = asksVersion2(request.headers["git-protocol"]);
        if (service === "git-upload-pack" && version2) {
          let capabilities: Buffer;
          try {
            capabilities = await git.v2Capabilities(admitted.repo);
          } catch (err) {
            request.log.warn(
              { err: (err as Error).message, service, repo: admitted.repo.fullName },
              "git service failed",
            );
            return refuse(
              reply,
              new HubError(500, "internal_error", "The hub could not read this repository; try again."),
            );
          }
          return reply
            .headers({ ...NO_CACHE, "content-type": `application/x-${service}-advertisement` })
            .send(capabilities);
        }
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

      for (const service of Object.keys(GIT_SERVICES) as GitService[]) {
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
