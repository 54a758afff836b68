import { Type, type Static } from "@sinclair/typebox";

/**
 * The one error body of every Hub operation. `error` stays a string because the
 * Hugging Face clients read it as one; `code` is the stable machine-readable key.
 */
export const ApiError = Type.Object(
  {
    error: Type.String({ description: "What went wrong and what to do about it." }),
    code: Type.String({ description: "Stable snake_case machine-readable error code." }),
    field: Type.Optional(
      Type.String({ description: "The request field the error is about, when there is one." }),
    ),
  },
  { $id: "Error", title: "Error" },
);
export type ApiError = Static<typeof ApiError>;

/** A reference to the shared error schema, for route response tables. */
export const ApiErrorRef = Type.Ref(ApiError);
