import type { FastifyInstance, FastifyRequest } from "fastify";
import { HubError } from "../errors.js";

/** How deep a JSON body may nest; the hub's own bodies need a handful of levels. */
export const MAX_JSON_DEPTH = 64;

/**
 * How deep a JSON text nests, counted without parsing it (and without
 * recursion), so a hostile body is refused before any recursive code sees it.
 * Brackets inside strings do not count.
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c)
        i++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x7d || char === 0x5d) depth--;
  }
  return deepest;
}

/** The 400 for a body nested deeper than the limit, as the Hub API and the Router both answer it. */
export function tooDeep(): HubError {
  return new HubError(
    400,
    "invalid_json",
    `JSON bodies may nest at most ${MAX_JSON_DEPTH} levels of objects and arrays; send a flatter body.`,
  );
}

/**
 * Replaces the JSON parser of an app (and adds it for other JSON media types,
 * such as Git LFS's): the nesting depth is checked first, then Fastify's own
 * parser guards against prototype poisoning. An empty body is no body for
 * routes that take none, and an error for the others.
 */
export function installJsonBodyParser(
  app: FastifyInstance,
  contentTypes: ReadonlyArray<string | RegExp>,
): void {
  const parse = app.getDefaultJsonParser("error", "error");
  for (const contentType of contentTypes) {
    if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
    app.addContentTypeParser(
      contentType,
      { parseAs: "string" },
      (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
        const text = typeof body === "string" ? body : body.toString("utf8");
        // A route that takes no body reads none: `@huggingface/hub`'s DELETE calls send this header with nothing after it.
        if (text === "" && !request.routeOptions.schema?.body) {
          done(null, undefined);
          return;
        }
        if (jsonNestingDepth(text) > MAX_JSON_DEPTH) {
          done(tooDeep());
          return;
        }
        parse(request, text, done);
      },
    );
  }
}
