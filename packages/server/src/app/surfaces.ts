import type { FastifyInstance } from "fastify";
import type { Surface } from "../config.js";
import { buildGitApp, buildHubApp } from "./hub-app.js";
import { isSessionInferenceToken } from "../areas/accounts/auth/session-inference.service.js";
import { createSshServer } from "../git/ssh/ssh-server.js";
import { createOpenAiCompatibleAdapter } from "../router/providers/openai-compatible.js";
import { createRouterServer } from "../router/router-server.js";
import { createUsageWriter } from "../router/usage-writer.js";

/** A running surface: something that listens and can be stopped. */
export interface Listener {
  listen(): Promise<string>;
  close(): Promise<void>;
}

type SurfaceDeps = Parameters<typeof buildHubApp>[0];

function fastifyListener(build: (deps: SurfaceDeps) => Promise<FastifyInstance>, surface: Surface) {
  return async (deps: SurfaceDeps): Promise<Listener> => {
    const app = await build(deps);
    return {
      listen: () => app.listen({ host: deps.config.host, port: deps.config.ports[surface] }),
      close: () => app.close(),
    };
  };
}

/** Every surface `hubd serve` can start, each on its own listener. */
export const SURFACE_BUILDERS: Record<Surface, (deps: SurfaceDeps) => Promise<Listener>> = {
  hub: fastifyListener(buildHubApp, "hub"),
  git: fastifyListener(buildGitApp, "git"),
  router: async (deps) => {
    const router = createRouterServer({
      config: deps.config.router,
      logger: deps.logger,
      // Access tokens, and the short-lived credentials browser sessions mint for the playground.
      tokens: {
        resolve: (secret) =>
          isSessionInferenceToken(secret)
            ? deps.sessionInference.resolve(secret)
            : deps.tokens.resolve(secret),
      },
      authorize: deps.authorize,
      inference: deps.inference,
      catalog: deps.catalog,
      stats: deps.stats,
      affinity: deps.affinity,
      usage: createUsageWriter(deps.inference, deps.logger),
      adapters: new Map(
        deps.config.router.providers.map((p) => [
          p.slug,
          createOpenAiCompatibleAdapter({ baseUrl: p.baseUrl }),
        ]),
      ),
      startedAt: deps.startedAt,
    });
    return {
      listen: () => router.listen(deps.config.host, deps.config.ports.router),
      close: () => router.close(),
    };
  },
  ssh: (deps) =>
    createSshServer({
      dataDir: deps.config.dataDir,
      host: deps.config.host,
      port: deps.config.ports.ssh,
      keys: deps.keys,
      repos: deps.repos,
      git: deps.git,
      authorize: deps.authorize,
      pullRequests: deps.discussions.pullRequests,
      gitPublicUrl: deps.config.gitPublicUrl,
      serverKey: deps.serverKey,
      maxConnectionsPerKey: deps.config.sshMaxConnectionsPerKey,
      logger: deps.logger,
    }),
};
