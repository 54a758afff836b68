import type { DbOrTx } from "../../db/database.js";
import { badRequest, conflict } from "../../errors.js";

/** Handles name users and organizations alike, in one namespace, and appear in repository ids. */
const HANDLE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

/** Whether a string has the form of a handle (it may still name nobody). */
export function isHandle(value: string): boolean {
  return HANDLE_PATTERN.test(value);
}

/** Paths of the hub that a handle would shadow. */
const RESERVED = new Set([
  "admin",
  "api",
  "auth",
  "datasets",
  "docs",
  "login",
  "logout",
  "mcps",
  "me",
  "models",
  "new",
  "organizations",
  "settings",
  "spaces",
  "static",
  "users",
  "whoami",
]);

/** Rejects a handle that is malformed, reserved, or already names a user or an organization. */
export async function claimableHandle(db: DbOrTx, handle: string, field = "handle"): Promise<void> {
  if (!HANDLE_PATTERN.test(handle)) {
    throw badRequest(
      "invalid_handle",
      `"${handle}" is not a valid handle: use 1 to 40 lower-case letters, digits or inner dashes.`,
      field,
    );
  }
  if (RESERVED.has(handle)) {
    throw badRequest("reserved_handle", `"${handle}" is reserved by the hub; choose another handle.`, field);
  }
  const [user, org] = await Promise.all([
    db.selectFrom("users").select("id").where("handle", "=", handle).executeTakeFirst(),
    db.selectFrom("organizations").select("id").where("handle", "=", handle).executeTakeFirst(),
  ]);
  if (user || org) throw conflict("handle_taken", `The handle "${handle}" is taken; choose another.`, field);
}
