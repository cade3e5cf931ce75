// Time as a2a records and shows it: unix seconds with millisecond fractions in records, and
// one ISO-8601 form (to the second, UTC) wherever a person reads a time; and the one check of
// a duration a record keeps (a TTL, a lease).

import { A2AError, arg, text } from "./errors";

export const nowSec = () => Math.round(Date.now()) / 1000;

export const isoTime = (sec: number) => new Date(sec * 1000).toISOString().replace(/\.\d+Z$/, "Z");

// A duration kept in a record runs from 1 ms (records keep time to the millisecond: a shorter
// one would be 0, which is refused) to 10 years.
export const MIN_DURATION_SEC = 0.001;
export const MAX_DURATION_SEC = 10 * 365 * 86400;

// `value` seconds as the `what` of `flag` (e.g. "TTL", "ttl"), or EUSAGE saying which bound it misses.
const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

// "90", "90s", "1.5m", "2h", "7d", "250ms" -> seconds. The one parser of every duration a
// user types (--timeout, --ttl, A2A_TOPIC_KEEP, ...); `name` is how the caller spells it.
export function parseDuration(text: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(String(text).trim());
  if (!m) throw new A2AError("EUSAGE", `${name} ${JSON.stringify(text)} is not a duration: use seconds or a number with ms, s, m, h or d (e.g. 30, 90s, 5m, 2h)`);
  return Number(m[1]) * UNITS[m[2] ?? "s"];
}

export function checkDuration(value: unknown, what: string, flag: string): number {
  const eg = arg(flag, "10m");
  const shown = typeof value === "number" && Math.abs(value) < 1 ? String(Number(value.toPrecision(6))) : String(value); // 1e-7, not 1.0000000000000001e-7
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new A2AError("EUSAGE", text`a ${what} of ${shown} s is not a positive duration: give one, e.g. ${eg}`, { data: { what } });
  }
  if (value < MIN_DURATION_SEC) {
    throw new A2AError("EUSAGE", text`a ${what} of ${shown} s is under 1 ms, the shortest a2a keeps: give at least ${arg(flag, "1ms")}, e.g. ${eg}`, { data: { what } });
  }
  if (value > MAX_DURATION_SEC) {
    throw new A2AError("EUSAGE", text`a ${what} of ${shown} s is over the 10-year maximum: give a shorter one, e.g. ${eg}`, { data: { what } });
  }
  return value;
}
