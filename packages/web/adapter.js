import { writeFileSync } from "node:fs";

/**
 * The hub's own SvelteKit adapter: the hub's Fastify listener serves the pages, so the build is only the
 * server bundle, its manifest and the static client files. `packages/server/src/app/web.ts` loads them.
 */
export default function hubAdapter() {
  return {
    name: "hub",
    async adapt(builder) {
      const out = "build";
      builder.rimraf(out);
      builder.writeClient(`${out}/client`);
      await builder.compress(`${out}/client`);
      builder.writePrerendered(`${out}/prerendered`);
      builder.writeServer(`${out}/server`);
      writeFileSync(
        `${out}/server/manifest.js`,
        `export const manifest = ${builder.generateManifest({ relativePath: "./" })};\n`,
      );
    },
  };
}
