import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { DATASET_TAGS, MODEL_TAGS } from "./vocabulary.js";

const KnownTag = Type.Object(
  {
    id: Type.String({ description: "What a card's metadata and a listing filter use." }),
    label: Type.String(),
    type: Type.String(),
    subType: Type.Optional(
      Type.String({ description: "For tasks: nlp, cv, audio, multimodal, tabular or rl." }),
    ),
  },
  { title: "KnownTag" },
);
const TagsByType = Type.Record(Type.String(), Type.Array(KnownTag), { title: "TagsByType" });

/** The tag vocabulary, as `huggingface_hub`'s get_model_tags and get_dataset_tags read it. */
export function tagsRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const [kind, tags] of [
      ["models", MODEL_TAGS],
      ["datasets", DATASET_TAGS],
    ] as const) {
      app.get(
        `/api/${kind}-tags-by-type`,
        {
          schema: {
            operationId: `tags_${kind}`,
            tags: ["Repositories"],
            summary: `The tags the hub knows for ${kind}, by type (task, library, license, language, ...).`,
            response: { 200: TagsByType },
          },
          config: { access: "public" },
        },
        async () => tags,
      );
    }
  };
}
