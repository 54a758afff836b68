import type { FastifyInstance } from "fastify";

/**
 * Accepts `application/x-www-form-urlencoded` bodies in the plugin it is added
 * to, as an object of strings; a repeated name becomes a list (checkboxes), so
 * a schema that wants one value rejects it. Routes opt in with `formBody`.
 */
export function addFormBodyParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_request, body, done) => {
      const fields: Record<string, string | string[]> = {};
      for (const [name, value] of new URLSearchParams(String(body))) {
        const seen = fields[name];
        fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
      }
      done(null, fields);
    },
  );
}
