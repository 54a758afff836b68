import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Two validators: request bodies are checked as sent (no coercion, unknown
 * fields rejected, never silently dropped); path and query strings are coerced
 * to the declared types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const common = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false } as const;
  const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const stringAjv = addFormats(new Ajv({ ...common, coerceTypes: "array" }));
  return ({ schema, httpPart }) => {
    // A raw binary body (an uploaded file) is checked by its route, byte by byte, not by a schema.
    if (httpPart === "body" && (schema as { format?: unknown }).format === "binary") return () => true;
    return (httpPart === "body" ? bodyAjv : stringAjv).compile(schema as object);
  };
}

/** What the error renderer reads of an Ajv error (Fastify passes them through as they are). */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The request field an Ajv error is about, as a dotted path. */
export function fieldOf(error: ValidationIssue): string {
  const path = error.instancePath.split("/").filter(Boolean).join(".");
  const { params } = error;
  const child =
    (typeof params.missingProperty === "string" && params.missingProperty) ||
    (typeof params.additionalProperty === "string" && params.additionalProperty) ||
    "";
  return [path, child].filter(Boolean).join(".");
}

/** A sentence that names the field, the rule it broke, and what to send instead. */
export function describeValidationError(error: ValidationIssue, context: string): string {
  const field = fieldOf(error) || context;
  const { params } = error;
  switch (error.keyword) {
    case "required":
      return `The ${context} field "${field}" is required.`;
    case "additionalProperties":
      return `The ${context} field "${field}" is not accepted here; remove it.`;
    case "enum":
    case "anyOf":
      return `The ${context} field "${field}" has a value that is not allowed; see the OpenAPI document for the allowed values.`;
    case "uniqueItems":
      return `The ${context} field "${field}" must not repeat items (items ${String(params.j)} and ${String(params.i)} are the same).`;
    default:
      return `The ${context} field "${field}" ${error.message ?? "is invalid"}.`;
  }
}
