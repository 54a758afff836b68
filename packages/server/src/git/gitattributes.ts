/** Turns one gitattributes pattern into a regular expression over repository paths (gitignore rules). */
function patternToRegExp(pattern: string): RegExp {
  let source = pattern.startsWith("/") ? pattern.slice(1) : pattern;
  const anchored = pattern.includes("/") && !/^[^/]*\/$/.test(pattern);
  source = source.replace(/\/$/, "");
  let regex = "";
  for (let i = 0; i < source.length; i++) {
    const char = source[i] ?? "";
    if (source.startsWith("**/", i)) {
      regex += "(?:.*/)?";
      i += 2;
    } else if (source.startsWith("/**", i) && i + 3 === source.length) {
      regex += "/.*";
      i += 2;
    } else if (char === "*") {
      regex += "[^/]*";
    } else if (char === "?") {
      regex += "[^/]";
    } else {
      regex += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(anchored ? `^${regex}$` : `(?:^|/)${regex}$`);
}

/**
 * Which paths a `.gitattributes` sends to Git LFS (`filter=lfs`). The last
 * matching line decides, as in git (https://git-scm.com/docs/gitattributes).
 */
export function lfsMatcher(gitattributes: string): (path: string) => boolean {
  const rules: Array<{ pattern: RegExp; lfs: boolean }> = [];
  for (const line of gitattributes.split(/\r?\n/)) {
    const [pattern, ...attributes] = line.trim().split(/\s+/);
    if (!pattern || pattern.startsWith("#")) continue;
    if (attributes.includes("filter=lfs")) rules.push({ pattern: patternToRegExp(pattern), lfs: true });
    else if (
      attributes.some(
        (a) => a === "-filter" || a === "!filter" || (a.startsWith("filter=") && a !== "filter=lfs"),
      )
    ) {
      rules.push({ pattern: patternToRegExp(pattern), lfs: false });
    }
  }
  return (path) => {
    let lfs = false;
    for (const rule of rules) if (rule.pattern.test(path)) lfs = rule.lfs;
    return lfs;
  };
}
