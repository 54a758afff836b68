import { randomUUID } from "node:crypto";
import hljs from "highlight.js/lib/core";
import type { HLJSApi, LanguageFn } from "highlight.js";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yamlLanguage from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";
import type { Token, Tokens } from "marked";
import sanitizeHtml from "sanitize-html";
import type { Attributes, IOptions, Tag } from "sanitize-html";
import { YAMLParseError, parse as parseYaml } from "yaml";

/** Where a card's relative links point: the web page of a file and its raw bytes, both without a trailing slash. */
export interface RepoLinks {
  /** Prefix for links to a file's page, e.g. `/alice/gpt/blob/main`. */
  blobBase: string;
  /** Prefix for a file's raw bytes (used for images), e.g. `/alice/gpt/resolve/main`. */
  rawBase: string;
}

/** A rendered model card: sanitized HTML, and the YAML front matter as data or the reason it could not be read. */
export interface RenderedCard {
  html: string;
  metadata: Record<string, unknown> | null;
  metadataError: string | null;
}

// A fixed set of grammars rather than all ~190: fewer grammars to trust with user input, and a small cold start.
const LANGUAGES: Readonly<Record<string, LanguageFn>> = {
  bash,
  c,
  cpp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  makefile,
  markdown,
  plaintext,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml: yamlLanguage,
};
let highlighter: HLJSApi | undefined;

/** A private highlight.js instance, so that nothing else registering languages on the shared one affects ours. */
function getHighlighter(): HLJSApi {
  if (highlighter === undefined) {
    highlighter = hljs.newInstance();
    for (const [name, language] of Object.entries(LANGUAGES)) highlighter.registerLanguage(name, language);
  }
  return highlighter;
}

const LANGUAGE_BY_EXTENSION: Readonly<Record<string, string>> = {
  py: "python",
  pyi: "python",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "typescript",
  json: "json",
  jsonl: "json",
  ipynb: "json",
  yaml: "yaml",
  yml: "yaml",
  md: "markdown",
  markdown: "markdown",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  toml: "ini",
  ini: "ini",
  cfg: "ini",
  rs: "rust",
  go: "go",
  c: "c",
  h: "c",
  cpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  hh: "cpp",
  cu: "cpp",
  java: "java",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  css: "css",
  sql: "sql",
  diff: "diff",
  patch: "diff",
};

const LANGUAGE_BY_FILE_NAME: Readonly<Record<string, string>> = {
  dockerfile: "dockerfile",
  makefile: "makefile",
};

/** Files larger than this are shown as escaped plain text: highlighting them would hold the server for too long. */
const MAX_HIGHLIGHT_CHARS = 512 * 1024;

/** How many leading bytes `isProbablyText` inspects (git's own heuristic looks at the same 8000). */
const TEXT_SAMPLE_BYTES = 8000;

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/**
 * Renders a model card (README.md) to HTML that is safe to put in a page as is.
 *
 * The YAML front matter becomes `metadata` (or `metadataError`, with the line counted from the top of the file);
 * the body is GitHub-flavoured Markdown, fenced code is highlighted, relative links and images resolve inside
 * the repository, and everything, raw HTML included, passes one allow-list sanitizer.
 *
 * Headings get plain GitHub slugs as `id` (`## Usage` → `id="usage"`), so links such as `#usage` written
 * for GitHub or the Hugging Face Hub keep working. `id` and `name` written in raw HTML are dropped, so a card
 * cannot plant ids such as `__proto__` or names that shadow `document` properties (DOM clobbering). A
 * generated slug is still chosen by the author through the heading text, so page scripts must not rely on
 * undeclared globals that an element id could shadow.
 */
export function renderCard(markdown: string, links: RepoLinks): RenderedCard {
  const { body, metadata, metadataError } = splitFrontMatter(markdown);
  const headingMarker = `hub-heading-${randomUUID()}:`;
  const rendered = markdownParser(headingMarker).parse(body, { async: false });
  return { html: sanitizeHtml(rendered, sanitizeOptions(links, headingMarker)), metadata, metadataError };
}

/**
 * Renders Markdown someone wrote on the hub (a discussion's comment, its preview) with exactly the card's
 * parser, highlighting and sanitizer, relative links and images resolving in the repository. It has no front
 * matter, and its headings get no `id`: many comments share a page, and their authors must not name the page's
 * elements.
 */
export function renderMarkdown(markdown: string, links: RepoLinks): string {
  const headingMarker = `hub-heading-${randomUUID()}:`;
  const rendered = markdownParser(headingMarker, false).parse(markdown.replace(/^\uFEFF/, ""), {
    async: false,
  });
  return sanitizeHtml(rendered, sanitizeOptions(links, headingMarker));
}

interface FrontMatter {
  body: string;
  metadata: Record<string, unknown> | null;
  metadataError: string | null;
}

function splitFrontMatter(markdown: string): FrontMatter {
  const match = FRONT_MATTER.exec(markdown);
  if (!match) return { body: markdown.replace(/^\uFEFF/, ""), metadata: null, metadataError: null };
  const body = markdown.slice(match[0].length);
  const source = match[1] ?? "";
  let value: unknown;
  try {
    // logLevel "error": a card's odd tags are not worth a warning in the server log; errors still throw.
    value = parseYaml(source, { prettyErrors: true, logLevel: "error" });
  } catch (error) {
    return { body, metadata: null, metadataError: describeYamlError(error) };
  }
  if (value === null || value === undefined) return { body, metadata: {}, metadataError: null };
  if (typeof value !== "object" || Array.isArray(value)) {
    const kind = Array.isArray(value) ? "a list" : `a ${typeof value}`;
    return {
      body,
      metadata: null,
      metadataError: `The front matter must be a YAML mapping (key: value lines), not ${kind}.`,
    };
  }
  return { body, metadata: value as Record<string, unknown>, metadataError: null };
}

function describeYamlError(error: unknown): string {
  if (!(error instanceof YAMLParseError)) {
    return `The front matter is not valid YAML: ${error instanceof Error ? error.message : String(error)}`;
  }
  const reason = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
  const position = error.linePos?.[0];
  // The front matter starts on the file's second line, after the opening `---`.
  const where = position ? ` (line ${position.line + 1}, column ${position.col})` : "";
  return `The front matter is not valid YAML${where}: ${reason}`;
}

function markdownParser(headingMarker: string, headingIds = true): Marked {
  const slugs = new GithubSlugger();
  return new Marked({
    gfm: true,
    async: false,
    renderer: {
      heading({ tokens, depth }: Tokens.Heading): string {
        const slug = headingIds ? slugs.slug(plainText(tokens)) : "";
        const id = slug === "" ? "" : ` id="${escapeHtml(headingMarker + slug)}"`;
        return `<h${depth}${id}>${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      code({ text, lang }: Tokens.Code): string {
        const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
        const code = text.endsWith("\n") ? text : `${text}\n`;
        if (language !== "" && getHighlighter().getLanguage(language)) {
          const highlighted = getHighlighter().highlight(code, { language, ignoreIllegals: true }).value;
          return `<pre><code class="hljs">${highlighted}</code></pre>\n`;
        }
        return `<pre><code>${escapeHtml(code)}</code></pre>\n`;
      },
    },
  });
}

/** The text a heading shows, as GitHub feeds it to its slugger (its textContent, without inline HTML tags). */
function plainText(tokens: readonly Token[]): string {
  let text = "";
  for (const token of tokens) {
    if ("tokens" in token && Array.isArray(token.tokens)) text += plainText(token.tokens);
    else if (token.type === "text" || token.type === "codespan" || token.type === "escape")
      text += token.text;
  }
  return text;
}

/** GitHub's heading slugs (as github-slugger makes them): lower case, punctuation dropped, repeats numbered. */
class GithubSlugger {
  readonly #occurrences = new Map<string, number>();

  slug(text: string): string {
    const base = text
      .toLowerCase()
      .trim()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    if (base === "") return "";
    let slug = base;
    let count = this.#occurrences.get(base);
    if (count !== undefined) {
      do {
        count += 1;
        slug = `${base}-${count}`;
      } while (this.#occurrences.has(slug));
      this.#occurrences.set(base, count);
    }
    this.#occurrences.set(slug, 0);
    return slug;
  }
}

const HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"];

const ALLOWED_TAGS = [
  ...HEADINGS,
  "p",
  "div",
  "br",
  "hr",
  "blockquote",
  "pre",
  "code",
  "span",
  "em",
  "strong",
  "b",
  "i",
  "del",
  "s",
  "ins",
  "sup",
  "sub",
  "kbd",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "table",
  "caption",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "th",
  "td",
  "a",
  "img",
  "input",
  "details",
  "summary",
];

const HLJS_CLASSES = ["hljs", "hljs-*", /^[a-z]+_+$/];

// Dropped with everything inside them; other disallowed tags are dropped but keep their text.
const DROPPED_WITH_CONTENT = [
  "script",
  "style",
  "textarea",
  "option",
  "noscript",
  "svg",
  "math",
  "iframe",
  "object",
  "embed",
  "template",
  "title",
  "select",
  "xmp",
  "noembed",
  "noframes",
];

function sanitizeOptions(links: RepoLinks, headingMarker: string): IOptions {
  const keepHeadingId = (tagName: string, attribs: Attributes): Tag => {
    const { id, ...rest } = attribs;
    if (id?.startsWith(headingMarker))
      return { tagName, attribs: { ...rest, id: id.slice(headingMarker.length) } };
    return { tagName, attribs: rest };
  };
  return {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: {
      ...Object.fromEntries(HEADINGS.map((tag) => [tag, ["id", "align"]])),
      a: ["href", "title", "rel"],
      img: ["src", "alt", "title", "width", "height", "align"],
      input: ["type", "checked", "disabled", "aria-label"],
      details: ["open"],
      p: ["align"],
      div: ["align"],
      th: ["align"],
      td: ["align"],
      ol: ["start"],
      code: ["class"],
      pre: ["class", "tabindex"],
      span: ["class"],
    },
    allowedClasses: { code: HLJS_CLASSES, pre: HLJS_CLASSES, span: HLJS_CLASSES },
    allowedSchemes: ["http", "https", "mailto"],
    allowedSchemesByTag: { img: ["http", "https", "data"] },
    allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
    allowProtocolRelative: false,
    disallowedTagsMode: "discard",
    nonTextTags: DROPPED_WITH_CONTENT,
    transformTags: {
      ...Object.fromEntries(HEADINGS.map((tag) => [tag, keepHeadingId])),
      a: (tagName, attribs) => ({ tagName, attribs: linkAttributes(attribs, links.blobBase) }),
      img: (tagName, attribs): Tag => {
        // The page's policy loads images from the hub only (no tracking pixels, no reader addresses leaked to
        // other hosts): an image elsewhere becomes a link to it, labelled with its alt text.
        const src = cleanUrl(attribs.src ?? "");
        if (/^https?:/i.test(src)) {
          return {
            tagName: "a",
            attribs: { href: src, rel: "nofollow noopener noreferrer" },
            text: attribs.alt?.trim() || src,
          };
        }
        return { tagName, attribs: imageAttributes(attribs, links.rawBase) };
      },
      // A code block that scrolls sideways must take focus so a keyboard can scroll it.
      pre: (tagName, attribs): Tag => ({ tagName, attribs: { ...attribs, tabindex: "0" } }),
      input: (tagName, attribs): Tag => {
        if (attribs.type?.toLowerCase() !== "checkbox") return { tagName, attribs: {} };
        // A task list's box is named for assistive technology; the item's text follows it.
        const checkbox: Attributes = { type: "checkbox", disabled: "", "aria-label": "Done" };
        if (attribs.checked !== undefined) checkbox.checked = "";
        return { tagName, attribs: checkbox };
      },
    },
    // Renaming the tag in transformTags instead would trip sanitize-html 2.17: a discarded renamed tag leaves its
    // name behind, and the next element at that depth is closed with it.
    exclusiveFilter: (frame) => frame.tag === "input" && frame.attribs.type !== "checkbox",
  };
}

type UrlKind = "fragment" | "absolute-path" | "protocol-relative" | "relative" | "scheme";

/** The URL as a browser reads it: tabs and newlines anywhere, and controls or spaces at either end, are ignored. */
function cleanUrl(url: string): string {
  // eslint-disable-next-line no-control-regex
  return url.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
}

function urlKind(url: string): UrlKind {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return "scheme";
  if (/^[/\\]{2}/.test(url)) return "protocol-relative";
  if (url.startsWith("/") || url.startsWith("\\")) return "absolute-path";
  if (url.startsWith("#")) return "fragment";
  return "relative";
}

/** Resolves a relative URL against the repository root, never above it; keeps its query and fragment. */
function resolveInRepository(url: string, base: string): string | null {
  const root = new URL("https://repository.invalid/");
  let resolved: URL;
  try {
    resolved = new URL(url, root);
  } catch {
    return null;
  }
  if (resolved.origin !== root.origin) return null;
  return `${base}${resolved.pathname}${resolved.search}${resolved.hash}`;
}

function linkAttributes(attribs: Attributes, blobBase: string): Attributes {
  const { href: rawHref, rel: _rel, ...rest } = attribs;
  const href = cleanUrl(rawHref ?? "");
  if (href === "") return rest;
  switch (urlKind(href)) {
    case "protocol-relative":
      return rest;
    case "relative": {
      const resolved = resolveInRepository(href, blobBase);
      return resolved === null ? rest : { href: resolved, ...rest };
    }
    case "scheme":
      // The sanitizer drops every scheme but http, https and mailto after this.
      if (/^https?:/i.test(href)) return { href, ...rest, rel: "nofollow noopener noreferrer" };
      return { href, ...rest };
    default:
      return { href, ...rest };
  }
}

function imageAttributes(attribs: Attributes, rawBase: string): Attributes {
  const { src: rawSrc, ...rest } = attribs;
  const src = cleanUrl(rawSrc ?? "");
  if (src === "") return rest;
  switch (urlKind(src)) {
    case "protocol-relative":
    case "fragment":
      return rest;
    case "relative": {
      const resolved = resolveInRepository(src, rawBase);
      return resolved === null ? rest : { src: resolved, ...rest };
    }
    case "scheme":
      // Raster images only: an SVG document can carry script.
      if (/^data:/i.test(src) && !/^data:image\/(?:png|jpeg|gif|webp)[;,]/i.test(src)) return rest;
      return { src, ...rest };
    default:
      return { src, ...rest };
  }
}

/**
 * Highlights a text file for the file page, one HTML string per line, so the page can number lines and
 * link `#L12`. The language comes from the file's extension (or name, for Dockerfile and Makefile);
 * unknown kinds and very large files come back as escaped plain text. Every line is self-contained: spans
 * a multi-line comment or string opened on an earlier line are reopened at its start and closed at its end.
 * The output holds only escaped text and `<span class="hljs-…">` elements. A final newline does not add an
 * empty last line (`"a\nb\n"` gives two lines, `""` gives none).
 */
export function highlightFile(text: string, path: string): string[] {
  const normalized = text.replace(/\r\n/g, "\n");
  if (normalized === "") return [];
  const content = normalized.endsWith("\n") ? normalized.slice(0, -1) : normalized;
  const language = languageOf(path);
  if (language === null || content.length > MAX_HIGHLIGHT_CHARS) return content.split("\n").map(escapeHtml);
  return splitHighlightedLines(getHighlighter().highlight(content, { language, ignoreIllegals: true }).value);
}

function languageOf(path: string): string | null {
  const name = (path.split("/").pop() ?? "").toLowerCase();
  const byName = LANGUAGE_BY_FILE_NAME[name];
  if (byName !== undefined) return byName;
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return null;
  return LANGUAGE_BY_EXTENSION[name.slice(dot + 1)] ?? null;
}

/**
 * Cuts highlight.js output (escaped text, `<span class="…">` and `</span>`) into lines with balanced spans.
 * Spans without an `hljs-` class (a sub-language's wrapper, `language-xml`) are left out.
 */
function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: (string | null)[] = [];
  const reopen = (): string =>
    open.map((className) => (className === null ? "" : `<span class="${className}">`)).join("");
  const close = (): string => open.map((className) => (className === null ? "" : "</span>")).join("");
  let line = "";
  const pieces = /<span class="([^"]*)">|<\/span>|\n/g;
  let last = 0;
  for (let match = pieces.exec(html); match !== null; match = pieces.exec(html)) {
    line += html.slice(last, match.index);
    last = pieces.lastIndex;
    const piece = match[0];
    if (piece === "\n") {
      lines.push(line + close());
      line = reopen();
    } else if (piece === "</span>") {
      if (open.pop()) line += "</span>";
    } else {
      const className = keptClasses(match[1] ?? "");
      open.push(className);
      if (className !== null) line += `<span class="${className}">`;
    }
  }
  lines.push(line + html.slice(last) + close());
  return lines;
}

function keptClasses(className: string): string | null {
  const classes = className.split(" ").filter((name) => /^hljs-[a-z-]+$|^[a-z]+_+$/.test(name));
  return classes.some((name) => name.startsWith("hljs-")) ? classes.join(" ") : null;
}

/**
 * Tells text from binary the way git does, plus an encoding check: no NUL byte in the first 8000 bytes,
 * and those bytes are valid UTF-8 (a character cut by the end of the sample still counts as valid).
 */
export function isProbablyText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, TEXT_SAMPLE_BYTES);
  if (sample.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: sample.length < bytes.length });
    return true;
  } catch {
    return false;
  }
}
