import type { DbOrTx } from "../../../db/database.js";
import { badRequest, conflict } from "../../../errors.js";

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
  "notifications",
  "organizations",
  "settings",
  "spaces",
  "static",
  "users",
  "whoami",
]);

/**
 * Rejects a handle that is malformed, reserved by the hub, already names a
 * user or an organization, or that another account renamed away from less
 * than its reservation period ago (`claimant`, the account that gave it up,
 * may take it back).
 */
export async function claimableHandle(
  db: DbOrTx,
  handle: string,
  options: { now: Date; field?: string; claimant?: string },
): Promise<void> {
  const field = options.field ?? "handle";
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
  const [user, org, reservation] = await Promise.all([
    db.selectFrom("users").select("id").where("handle", "=", handle).executeTakeFirst(),
    db.selectFrom("organizations").select("id").where("handle", "=", handle).executeTakeFirst(),
    db.selectFrom("handle_reservations").selectAll().where("handle", "=", handle).executeTakeFirst(),
  ]);
  if (user || org) throw conflict("handle_taken", `The handle "${handle}" is taken; choose another.`, field);
  if (
    reservation &&
    reservation.user_id !== options.claimant &&
    Date.parse(reservation.reserved_until) > options.now.getTime()
  ) {
    throw conflict(
      "handle_reserved",
      `The handle "${handle}" was recently given up by another account and is reserved for it until ${reservation.reserved_until}; choose another.`,
      field,
    );
  }
}

/**
 * Hands a claimable handle to its new holder: its reservation ends, and the
 * old repository names under it stop redirecting, except, when the account
 * that gave it up takes it back, those of its repositories now elsewhere.
 */
export async function claimHandle(db: DbOrTx, handle: string, claimantId: string): Promise<void> {
  const reservation = await db
    .selectFrom("handle_reservations")
    .select("user_id")
    .where("handle", "=", handle)
    .executeTakeFirst();
  await db.deleteFrom("handle_reservations").where("handle", "=", handle).execute();
  let redirects = db.deleteFrom("repo_redirects").where("owner_handle", "=", handle);
  if (reservation?.user_id === claimantId) {
    redirects = redirects.where("repository_id", "in", (eb) =>
      eb.selectFrom("repositories").select("id").where("owner_id", "=", claimantId),
    );
  }
  await redirects.execute();
}

/** When a reservation of a handle given up now ends: renamed-away usernames and deleted accounts keep theirs this long. */
export function reservationEnd(now: Date, reservationDays: number): string {
  return new Date(now.getTime() + reservationDays * 86_400_000).toISOString();
}
