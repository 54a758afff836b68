/**
 * arXiv identifiers, as https://info.arxiv.org/help/arxiv_identifier.html
 * defines them: `YYMM.NNNN` (April 2007 to December 2014) and `YYMM.NNNNN`
 * (from January 2015), and before April 2007 `archive/YYMMNNN`, optionally
 * with a subject class (`math.GT/0309136`), which does not take part in the
 * identity and is dropped. Either form may carry a version (`v2`).
 */

/** An identifier in its normalised form, with the version apart. */
export interface ArxivId {
  id: string;
  version: number | null;
}

/** The archives that numbered papers in the old scheme. */
const OLD_ARCHIVES = new Set([
  "acc-phys",
  "adap-org",
  "alg-geom",
  "ao-sci",
  "astro-ph",
  "atom-ph",
  "bayes-an",
  "chao-dyn",
  "chem-ph",
  "cmp-lg",
  "comp-gas",
  "cond-mat",
  "cs",
  "dg-ga",
  "funct-an",
  "gr-qc",
  "hep-ex",
  "hep-lat",
  "hep-ph",
  "hep-th",
  "math",
  "math-ph",
  "mtrl-th",
  "nlin",
  "nucl-ex",
  "nucl-th",
  "patt-sol",
  "physics",
  "plasm-ph",
  "q-alg",
  "q-bio",
  "quant-ph",
  "solv-int",
  "supr-con",
]);

const NEW_FORM = /^(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?$/;
const OLD_FORM = /^([a-z-]+)(?:\.([a-z-]+))?\/(\d{2})(\d{2})(\d{3})(?:v(\d+))?$/i;
const VERSION = /^[1-9]\d{0,2}$/;

/** `YYMM` as a number of months since January 1900, years 91-99 being the 1990s. */
function monthIndex(yy: number, mm: number): number {
  return (yy >= 91 ? 1900 + yy : 2000 + yy) * 12 + (mm - 1);
}

const FIRST_NEW = monthIndex(7, 4);
const FIRST_FIVE_DIGITS = monthIndex(15, 1);
const FIRST_OLD = monthIndex(91, 8);

function versionOf(raw: string | undefined): number | null | string {
  if (raw === undefined) return null;
  return VERSION.test(raw) ? Number(raw) : `the version "v${raw}" is not a number from 1 to 999`;
}

/**
 * Reads an identifier (an `arXiv:` prefix is allowed), or says in a phrase
 * why it is not one; identifiers of months after `now`'s do not exist yet.
 */
export function readArxivId(input: string, now: Date): ArxivId | { problem: string } {
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  const text = input.trim().replace(/^arxiv:/i, "");
  const fresh = NEW_FORM.exec(text);
  if (fresh) {
    const [, yy = "", mm = "", number = "", rawVersion] = fresh;
    const month = Number(mm);
    if (month < 1 || month > 12) return { problem: `"${mm}" is not a month (YYMM)` };
    const index = monthIndex(Number(yy), month);
    if (index < FIRST_NEW)
      return { problem: "identifiers of the form YYMM.NNNNN start in April 2007 (0704)" };
    if (index > current) return { problem: `${yy}${mm} is a month still to come` };
    const digits = index >= FIRST_FIVE_DIGITS ? 5 : 4;
    if (number.length !== digits)
      return { problem: `papers of ${yy}${mm} are numbered with ${digits} digits after the dot` };
    if (/^0+$/.test(number)) return { problem: "paper numbers start at 1" };
    const version = versionOf(rawVersion);
    if (typeof version === "string") return { problem: version };
    return { id: `${yy}${mm}.${number}`, version };
  }
  const old = OLD_FORM.exec(text);
  if (old) {
    const [, rawArchive = "", , yy = "", mm = "", number = "", rawVersion] = old;
    const archive = rawArchive.toLowerCase();
    if (!OLD_ARCHIVES.has(archive)) return { problem: `"${rawArchive}" is not an arXiv archive` };
    const month = Number(mm);
    if (month < 1 || month > 12) return { problem: `"${mm}" is not a month (YYMM)` };
    const index = monthIndex(Number(yy), month);
    if (index < FIRST_OLD || index >= FIRST_NEW)
      return { problem: "identifiers of the form archive/YYMMNNN run from August 1991 to March 2007" };
    if (number === "000") return { problem: "paper numbers start at 001" };
    const version = versionOf(rawVersion);
    if (typeof version === "string") return { problem: version };
    return { id: `${archive}/${yy}${mm}${number}`, version };
  }
  return {
    problem: "it is neither YYMM.NNNNN (e.g. 2106.09685) nor archive/YYMMNNN (e.g. hep-th/9901001)",
  };
}

/** The first month an identifier could have been given, as `YYYY-MM`. */
export function arxivMonth(id: string): string {
  const match = /(\d{2})(\d{2})(?:\.|\d{3}$)/.exec(id);
  const yy = Number(match?.[1] ?? 0);
  return `${yy >= 91 ? 1900 + yy : 2000 + yy}-${match?.[2] ?? "01"}`;
}

/** The paper's abstract page on arXiv. */
export function arxivUrl({ id, version }: ArxivId): string {
  return `https://arxiv.org/abs/${id}${version === null ? "" : `v${version}`}`;
}
