import type { DailyPapersQuery } from "@hub/api";
import { badRequest } from "../../../errors.js";

const DAY_MS = 86_400_000;

/** A valid UTC day, or the 400 naming the parameter. */
function day(year: number, month: number, date: number, field: string): Date {
  const value = new Date(Date.UTC(year, month - 1, date));
  if (value.getUTCFullYear() !== year || value.getUTCMonth() !== month - 1 || value.getUTCDate() !== date)
    throw badRequest("invalid_value", `${field} is not a date of the calendar.`, field);
  return value;
}

/** Monday of ISO week `week` of `year`: week 1 holds January 4th. */
function isoWeekStart(year: number, week: number): Date {
  const january4 = Date.UTC(year, 0, 4);
  const weekday = (new Date(january4).getUTCDay() + 6) % 7;
  return new Date(january4 - weekday * DAY_MS + (week - 1) * 7 * DAY_MS);
}

/** How many ISO weeks a year has (52 or 53). */
function isoWeeks(year: number): number {
  return Math.round((isoWeekStart(year + 1, 1).getTime() - isoWeekStart(year, 1).getTime()) / (7 * DAY_MS));
}

/**
 * The period of submissions a daily-papers query asks for, as a half-open
 * range of ISO times: a day, an ISO week or a month (one at most), or all
 * time. `trending` is refused: the hub ranks nothing by votes yet.
 */
export function dailyPeriod(query: DailyPapersQuery): { from?: string; to?: string } {
  const given = (["date", "week", "month"] as const).filter((key) => query[key] !== undefined);
  if (given.length > 1)
    throw badRequest(
      "invalid_value",
      `Give one of date, week or month, not ${given.join(" and ")}.`,
      given[1],
    );
  if (query.sort !== undefined && query.sort !== "publishedAt") {
    throw badRequest(
      "unsupported_parameter",
      `sort: "${query.sort}" is not available on this hub; papers come newest submission first (publishedAt).`,
      "sort",
    );
  }
  const range = (from: Date, to: Date) => ({ from: from.toISOString(), to: to.toISOString() });
  if (query.date !== undefined) {
    const [year = 0, month = 0, date = 0] = query.date.split("-").map(Number);
    const start = day(year, month, date, "date");
    return range(start, new Date(start.getTime() + DAY_MS));
  }
  if (query.week !== undefined) {
    const [year = 0, week = 0] = query.week.split("-W").map(Number);
    if (week < 1 || week > isoWeeks(year))
      throw badRequest(
        "invalid_value",
        `${query.week} is not an ISO week: ${year} has ${isoWeeks(year)}.`,
        "week",
      );
    const start = isoWeekStart(year, week);
    return range(start, new Date(start.getTime() + 7 * DAY_MS));
  }
  if (query.month !== undefined) {
    const [year = 0, month = 0] = query.month.split("-").map(Number);
    const start = day(year, month, 1, "month");
    return range(start, new Date(Date.UTC(year, month, 1)));
  }
  return {};
}
