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

/** The Router's error body: the OpenAI error object, which OpenAI-compatible clients parse. */
export const RouterError = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String({ description: "The error family, e.g. invalid_request_error." }),
      param: Type.Union([Type.String(), Type.Null()]),
      code: Type.String({ description: "Stable machine-readable code, e.g. invalid_model." }),
    }),
  },
  { title: "RouterError" },
);
export type RouterError = Static<typeof RouterError>;
