import type { Reaction } from "@hub/api";

/** What each reaction is called, for those who hear the page rather than see its emoji. */
export const REACTION_NAMES: Readonly<Record<Reaction, string>> = {
  "🔥": "fire",
  "🚀": "rocket",
  "👀": "eyes",
  "❤️": "heart",
  "🤗": "hugging face",
  "😎": "cool",
  "➕": "plus one",
  "🧠": "brain",
  "👍": "thumbs up",
  "🤝": "handshake",
  "😔": "pensive",
  "🤯": "mind blown",
};

/** The reactions a comment can take, in the API's order. */
export const REACTION_LIST = Object.keys(REACTION_NAMES) as Reaction[];
