// The names and ids a2a accepts, whatever the engine: the only gate between user input and a
// store's keys (a directory's file names, a database's rows). Engine-neutral.

import { cut } from "./cut";
import { A2AError } from "./errors";

export const NAME_RULE = "names are 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'";
const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function isValidName(name: unknown): name is string {
  return typeof name === "string" && NAME_RE.test(name);
}

// The order names are listed in: by code unit (names are ASCII, NAME_RE), the same on every
// machine whatever its locale, and without loading ICU's collator as localeCompare does
// (half a millisecond of a command's start-up).
// The sender name of the person at the dashboard (lib/mail/human.ts): no agent can take it,
// since no name may start with "@" (NAME_RULE).
export const HUMAN = "@human";

export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// Throws a usage error naming the rule; the only gate between user input and a path.
export function checkName(name: unknown, what = "name"): string {
  if (!isValidName(name)) {
    const shown = typeof name === "string" ? JSON.stringify(cut(name, 60)) : String(name);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: ${NAME_RULE}`, { data: { what } });
  }
  return name;
}

// Agent names (senders, recipients, subscribers, peers) follow the slot name rule.
export const checkAgent = (name: unknown, what = "agent name") => checkName(name, what);

// Message ids: 16-digit microseconds since the epoch, then the writer's tags (lib/mail/message.ts).
const ID_RE = /^\d{16}-[0-9a-f]{4}-[0-9a-z]+-[0-9a-f]{6}$/;
export const isMessageId = (id: unknown): id is string => typeof id === "string" && ID_RE.test(id);

// Task ids: 16-digit microseconds since the epoch, "-", 8 random hex digits.
const TASK_ID_RE = /^\d{16}-[0-9a-f]{8}$/;
export const isTaskId = (id: unknown): id is string => typeof id === "string" && TASK_ID_RE.test(id);
