import type { ContentFilter, Recommendation, RepoListItem } from "@hub/api";

/** What shapes an account's recommendations: its stored preferences, learned interests and suppressions. */
export interface RecommendationProfile {
  /** The account itself: its own repositories are not recommended to it. */
  handle: string;
  hiddenTags: string[];
  /** Preferred languages, most preferred first. */
  languages: string[];
  contentFilters: ContentFilter[];
  /** Learned interests, strongest first. */
  interests: { tag: string; score: number }[];
  /** Suppressed repositories (database ids), authors (handles) and tags. */
  suppressed: { repositories: Set<string>; authors: Set<string>; tags: Set<string> };
}

/** Whether a candidate may be shown at all: nothing suppressed, hidden or filtered out ever is. */
export function allowed(item: RepoListItem, profile: RecommendationProfile): boolean {
  const tags = item.tags ?? [];
  if (item.author === profile.handle) return false;
  if (profile.suppressed.repositories.has(item._id)) return false;
  if (profile.suppressed.authors.has(item.author.toLowerCase())) return false;
  if (tags.some((tag) => profile.suppressed.tags.has(tag) || profile.hiddenTags.includes(tag))) return false;
  for (const filter of profile.contentFilters) {
    if (filter === "not-for-all-audiences" && tags.includes("not-for-all-audiences")) return false;
    if (filter === "gated" && item.gated !== false) return false;
    if (filter === "without-license" && !tags.some((tag) => tag.startsWith("license:"))) return false;
    if (filter === "without-model-card" && (item.cardData === null || item.cardData === undefined))
      return false;
  }
  return true;
}

/**
 * Orders the allowed candidates: a preferred language weighs more the higher it is in the list, a learned
 * interest by its share of the strongest one; trending breaks ties and ranks the rest. Each keeps its reasons.
 */
export function rank(
  candidates: RepoListItem[],
  profile: RecommendationProfile,
  limit: number,
): Recommendation[] {
  const strongest = Math.max(1, ...profile.interests.map((interest) => interest.score));
  const seen = new Set<string>();
  const scored: { item: Recommendation; score: number }[] = [];
  for (const item of candidates) {
    if (seen.has(item._id) || !allowed(item, profile)) continue;
    seen.add(item._id);
    const tags = new Set(item.tags ?? []);
    const reasons: string[] = [];
    let score = 0;
    profile.languages.forEach((language, index) => {
      if (!tags.has(language)) return;
      reasons.push(language);
      score += 2 * (1 - index / Math.max(profile.languages.length, 1)) + 1;
    });
    for (const interest of profile.interests) {
      if (!tags.has(interest.tag)) continue;
      reasons.push(interest.tag);
      score += interest.score / strongest;
    }
    // Trending counts, but under any stated or learned preference.
    const trending = Math.log1p(Math.max(0, item.trendingScore ?? 0)) / 100;
    scored.push({ item: { ...item, reasons }, score: score + trending });
  }
  return scored
    .sort((a, b) => b.score - a.score || b.item.lastModified.localeCompare(a.item.lastModified))
    .slice(0, limit)
    .map(({ item }) => item);
}
