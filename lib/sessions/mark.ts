// The states a session can be in, and a stored state mark read back (checked field by field: a
// record is trusted by its writer, its values are not). A pure module, so a front end may check
// a state given by a user before it opens anything.
import { A2AError } from "../core/errors";
import type { StateMark } from "./storage";

export type { StateMark };
export type LiveState = StateMark["state"];
export type SessionState = LiveState | "gone";
export const SESSION_STATES: readonly SessionState[] = ["working", "idle", "waiting", "needs-you", "gone"];
const LIVE: readonly string[] = SESSION_STATES.filter((s) => s !== "gone");
const MAX_ON = 200; // characters of what a session waits on or asks

const plain = (v: any): StateMark | undefined =>
  v && typeof v === "object" && LIVE.includes(v.state) && typeof v.since === "number" && Number.isFinite(v.since)
    ? { state: v.state, since: v.since, on: typeof v.on === "string" ? v.on.slice(0, MAX_ON) : null }
    : undefined;

export function markOf(v: any): StateMark | undefined {
  const m = plain(v);
  if (m?.state !== "waiting") return m;
  const by = v.by && typeof v.by.host === "string" && Number.isSafeInteger(v.by.pid) && v.by.pid > 0 ? { host: v.by.host, pid: v.by.pid } : undefined;
  const was = plain(v.was);
  return { ...m, ...(by ? { by } : {}), ...(was && was.state !== "waiting" ? { was: was as StateMark["was"] } : {}) };
}

export const mark = (state: LiveState, since: number, on: string | null = null): StateMark => ({ state, since, on: on === null ? null : on.slice(0, MAX_ON) });

// States as a user gives them ("idle", "idle,gone"): each one of SESSION_STATES.
export function checkStates(given: string[]): SessionState[] {
  const bad = given.find((s) => !SESSION_STATES.includes(s as SessionState));
  if (bad !== undefined || !given.length) {
    throw new A2AError("EUSAGE", `unknown session state ${JSON.stringify(bad ?? "")}: use ${SESSION_STATES.join(", ")} (several: idle,gone)`);
  }
  return given as SessionState[];
}
