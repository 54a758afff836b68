/** The orders a listing page offers, and the API's `sort` and `direction` for each. */
export const LISTING_SORTS = {
  trending: { label: "Trending", sort: "trendingScore", direction: "" },
  downloads: { label: "Most downloads", sort: "downloads", direction: "" },
  likes: { label: "Most likes", sort: "likes", direction: "" },
  updated: { label: "Recently updated", sort: "lastModified", direction: "" },
  created: { label: "Recently created", sort: "createdAt", direction: "" },
  name: { label: "Name", sort: "id", direction: "1" },
  relevance: { label: "Best match", sort: "", direction: "" },
} as const;
export type ListingSort = keyof typeof LISTING_SORTS;

/** The tag filters a listing page keeps in its query (`filter` is a raw tag, as the model tree links send). */
export const LISTING_FILTERS = ["task", "library", "language", "license", "filter"] as const;
export type ListingFilter = (typeof LISTING_FILTERS)[number];

/** Parameter-count buckets of models, as `num_parameters` asks for them. */
export const SIZE_BUCKETS = {
  small: { label: "< 1B", query: "max:1B" },
  medium: { label: "1B – 10B", query: "min:1B,max:10B" },
  large: { label: "> 10B", query: "min:10B" },
} as const;
export type SizeBucket = keyof typeof SIZE_BUCKETS;

/** Common values the filter menus offer; a value in the page's query is offered too. */
export const COMMON_TASKS = [
  "text-generation",
  "text-classification",
  "token-classification",
  "fill-mask",
  "question-answering",
  "summarization",
  "translation",
  "feature-extraction",
  "sentence-similarity",
  "text-to-image",
  "image-classification",
  "image-to-text",
  "object-detection",
  "automatic-speech-recognition",
  "text-to-speech",
];
export const COMMON_LIBRARIES = [
  "transformers",
  "sentence-transformers",
  "diffusers",
  "peft",
  "gguf",
  "onnx",
  "safetensors",
  "timm",
  "keras",
  "pytorch",
  "datasets",
];
export const COMMON_LICENSES = [
  "apache-2.0",
  "mit",
  "cc-by-4.0",
  "cc-by-sa-4.0",
  "cc-by-nc-4.0",
  "openrail",
  "llama3",
  "gpl-3.0",
  "bsd-3-clause",
  "other",
];

/** Parameter counts for people: 7.2B, 340M, 12K. */
export function formatParameters(count: number): string {
  const units: [number, string][] = [
    [1e12, "T"],
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
  ];
  for (const [size, unit] of units) {
    if (count >= size) {
      const value = count / size;
      return `${value >= 100 ? value.toFixed(0) : Number(value.toFixed(1))}${unit}`;
    }
  }
  return String(count);
}

/** Counts in lists: 1.2k, 3.4M. */
export function formatCount(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1e6) return `${Number((count / 1000).toFixed(1))}k`;
  return `${Number((count / 1e6).toFixed(1))}M`;
}
