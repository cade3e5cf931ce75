// Reservations on paths: an agent keeps others out of files (a path, a directory, a glob) of one
// repository until a time. Advisory: a2a refuses conflicting reservations, and the guard (git
// hooks) and the PreToolUse hook refuse edits and commits through `blockers`; nothing stops a
// process that asks no one.
//
//   per repository (repo.ts: every worktree of it, every clone with its origin), one set
//   (storage.ts), each record {"a2a":1,"repo","pattern","holder","exclusive","reason",
//   "created_at","expires_at","host","pid"}
//
// A reservation is live until its expires_at. Two reservations conflict when their holders
// differ, their patterns overlap (patterns.ts: some path is covered by both) and at least one
// is exclusive.
//
// reserve PATTERNS as H: one change of the set: every live reservation of another holder is
// checked against every pattern; one conflict refuses the whole call (ECONFLICT naming holder,
// pattern, reason and expiry; nothing written); else each pattern is written as H's, replacing
// H's own reservation of the same pattern (renewing: its created_at is kept), and expired
// reservations are dropped. So of two reservers of overlapping patterns exactly one wins: the
// second's change decides on what the first wrote. With `wait`, it looks again at every change
// of the repository's set (and every RECHECK_MS, for expiries) until it can take them all.
// release: one change removing H's own reservations of the patterns (or all of H's). A crash
// leaves the set as the last change wrote it; a dead holder's reservations end at their TTL.

import type { Store } from "../core/config";
import { A2AError, arg, op, text } from "../core/errors";
import { done, type Outcome } from "../core/outcome";
import { checkAgent } from "../core/names";
import { checkDuration, isoTime, nowSec } from "../core/time";
import { checkTimeout, waitUntil } from "../core/watch";
import { actingAgent } from "../presence/session-name";
import { RECHECK_MS } from "../tasks/state";
import { covers, overlap } from "./patterns";
import { fileRepos, relativePath, repoOf, type Repo } from "./repo";
import { aliasSets, dropOwn, onceEach, wholeSet } from "./aliases";
import { reservationStorage, type Reservation } from "./storage";

export type { Reservation } from "./storage";

export const DEFAULT_RESERVATION_TTL_SEC = 3600;
export const MAX_RESERVATION_PATTERNS = 1000;
export const MAX_REASON_CHARS = 500;

export interface ReserveOptions {
  as?: string;
  cwd: string;
  ttlSec?: number;
  shared?: boolean;
  reason?: string;
  wait?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

// The repository `cwd` is in, as this store keys it.
export const repositoryOf = (store: Store, cwd: string): Repo => repoOf(cwd, store.host, { repoName: store.repoName });

const live = (rs: Reservation[], now: number) => rs.filter((r) => r.expires_at > now);
const clash = (r: Reservation, me: string, pattern: string, exclusive: boolean) => r.holder !== me && (exclusive || r.exclusive) && overlap(r.pattern, pattern);

function patternsOf(repo: Repo, cwd: string, given: unknown, what: string): string[] {
  if (!Array.isArray(given) || given.length === 0 || given.length > MAX_RESERVATION_PATTERNS) {
    throw new A2AError("EUSAGE", `give 1 to ${MAX_RESERVATION_PATTERNS} paths or globs to ${what}`);
  }
  return [...new Set(given.map((p) => relativePath(repo, cwd, p)))];
}

async function holderOf(store: Store, as: string | undefined, cwd: string): Promise<string> {
  if (as !== undefined) return checkAgent(as, "holder name");
  return (await actingAgent(store, undefined, cwd)).name;
}

function checkReason(reason: unknown): string | null {
  if (reason === undefined || reason === null || reason === "") return null;
  if (typeof reason !== "string" || reason.length > MAX_REASON_CHARS || reason.includes("\0")) {
    throw new A2AError("EUSAGE", `a reason is text of at most ${MAX_REASON_CHARS} characters without NUL: shorten it`);
  }
  return reason;
}

type Conflict = { pattern: string; by: Reservation };

// The refusal: thrown out of a change, so nothing is written (an engine passes an A2AError
// through as it is); a waiting reserve catches it (refusedOf) and looks again.
function refusal(conflicts: Conflict[], me: string): A2AError {
  const seen = new Set<Reservation>();
  const held = conflicts.filter((c) => !seen.has(c.by) && seen.add(c.by));
  const who = held.map((c) => `${c.pattern}: ${describe(c.by)}`).join("; ");
  return new A2AError("ECONFLICT", text`cannot reserve as ${me}: ${who}; nothing was reserved. Wait for them with ${arg("wait")}, message them, or see ${op("reservations")}`, {
    data: { conflicts: conflicts.map((c) => ({ pattern: c.pattern, holder: c.by.holder, held: c.by.pattern, exclusive: c.by.exclusive, reason: c.by.reason, expires_at: c.by.expires_at })) },
  });
}

const refusedOf = (err: unknown): A2AError | undefined =>
  err instanceof A2AError && err.code === "ECONFLICT" && Array.isArray(err.data.conflicts) ? err : undefined;

// Reserves every pattern or none. Without wait: done with the reservations written, or
// ECONFLICT. With wait: done, timeout or aborted (pending: the patterns still held by others).
export async function reserve(store: Store, patterns: string[], opts: ReserveOptions): Promise<Outcome<Reservation[] | undefined>> {
  const repo = repositoryOf(store, opts.cwd);
  const wanted = patternsOf(repo, opts.cwd, patterns, "reserve");
  const ttl = opts.ttlSec === undefined ? DEFAULT_RESERVATION_TTL_SEC : checkDuration(opts.ttlSec, "TTL", "ttl");
  const reason = checkReason(opts.reason);
  checkTimeout(opts.timeoutMs);
  const me = await holderOf(store, opts.as, opts.cwd);
  const exclusive = !opts.shared;
  const storage = reservationStorage(store);
  const attempt = async (): Promise<Reservation[] | A2AError> => {
    try {
      const older = await aliasSets(storage, repo);
      const written = await storage.change(repo.id, (current) => {
        const now = nowSec();
        const kept = live(current, now);
        const conflicts = wanted.flatMap((pattern) => [...kept, ...live(older, now)].filter((r) => clash(r, me, pattern, exclusive)).map((by) => ({ pattern, by })));
        if (conflicts.length) throw refusal(conflicts, me);
        const mine = new Map(kept.filter((r) => r.holder === me && wanted.includes(r.pattern)).map((r) => [r.pattern, r]));
        const fresh = wanted.map((pattern): Reservation => ({
          a2a: 1, repo: repo.id, pattern, holder: me, exclusive, reason,
          created_at: mine.get(pattern)?.created_at ?? now, expires_at: now + ttl, host: store.host, pid: process.pid,
        }));
        return [...kept.filter((r) => !(r.holder === me && wanted.includes(r.pattern))), ...fresh];
      });
      // The holder's own reservations of these patterns under an alias are replaced by these.
      await dropOwn(storage, repo.aliases, older, (r) => r.holder === me && wanted.includes(r.pattern));
      return written.filter((r) => r.holder === me && wanted.includes(r.pattern));
    } catch (err) {
      const refused = refusedOf(err);
      if (refused) return refused;
      throw err;
    }
  };
  const first = await attempt();
  if (!(first instanceof A2AError)) return done(first);
  if (!opts.wait) throw first;
  let pending = pendingOf(first);
  const outcome = await waitUntil(
    store,
    { on: "reservations", repo: repo.id },
    async () => {
      const r = await attempt();
      if (r instanceof A2AError) {
        pending = pendingOf(r);
        return undefined;
      }
      return r;
    },
    { timeoutMs: opts.timeoutMs, signal: opts.signal, recheckMs: RECHECK_MS },
  );
  return outcome.kind === "done" ? outcome : { ...outcome, pending };
}

const pendingOf = (r: A2AError) => [...new Set((r.data.conflicts as { pattern: string }[]).map((c) => c.pattern))];

// One line per conflict: the holder, their pattern, reason and expiry.
export const describe = (r: Reservation) =>
  `${r.holder} holds ${r.pattern} (${r.exclusive ? "exclusive" : "shared"}${r.reason ? `: ${r.reason}` : ""}) until ${isoTime(r.expires_at)}`;

// Releases `as`'s own reservations of `patterns` (as normalised: the same spelling as reserved),
// or all of them. Another holder's live reservation of one of the patterns is ECONFLICT,
// nothing released. Returns the patterns released.
export async function release(store: Store, patterns: string[] | "all", opts: { as?: string; cwd: string }): Promise<string[]> {
  const repo = repositoryOf(store, opts.cwd);
  const wanted = patterns === "all" ? "all" : patternsOf(repo, opts.cwd, patterns, "release");
  const me = await holderOf(store, opts.as, opts.cwd);
  const ours = (r: Reservation) => r.holder === me && (wanted === "all" || wanted.includes(r.pattern));
  const storage = reservationStorage(store);
  const whole = await wholeSet(storage, repo);
  if (wanted !== "all") refuseOthers(whole, wanted, me);
  // Nothing of ours to release: no change is made (a release never creates a set).
  if (!whole.some(ours)) return [];
  let released: string[] = [];
  if ((await storage.live(repo.id)).some(ours)) {
    await storage.change(repo.id, (current) => {
      const now = nowSec();
      if (wanted !== "all") refuseOthers(current, wanted, me);
      released = live(current, now).filter(ours).map((r) => r.pattern);
      return live(current, now).filter((r) => !ours(r));
    });
  }
  const fromAliases = await dropOwn(storage, repo.aliases, await aliasSets(storage, repo), ours);
  return [...new Set([...released, ...fromAliases])];
}

function refuseOthers(current: Reservation[], wanted: string[], me: string): void {
  const now = nowSec();
  const other = live(current, now).find((r) => r.holder !== me && wanted.includes(r.pattern) && !current.some((o) => o.holder === me && o.pattern === r.pattern));
  if (other) {
    throw new A2AError("ECONFLICT", text`${me} does not hold ${other.pattern}: ${describe(other)}; message them, or release your own (${op("reservations")} lists them)`, {
      data: { pattern: other.pattern, holder: other.holder },
    });
  }
}

const sortReservations = (rs: Reservation[]) =>
  rs.sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0));

export interface Listing {
  repo: string; // the repository's identity
  root: string; // its work tree here
  reservations: Reservation[]; // live ones, by pattern then holder
}

// Every live reservation of the repository `cwd` is in, or those overlapping any of `paths`
// (paths or globs, as reserve takes them).
export async function listReservations(store: Store, opts: { cwd: string; paths?: string[] }): Promise<Listing> {
  const repo = repositoryOf(store, opts.cwd);
  const wanted = opts.paths?.length ? patternsOf(repo, opts.cwd, opts.paths, "look up") : undefined;
  const all = live(await wholeSet(reservationStorage(store), repo), nowSec());
  const shown = wanted ? all.filter((r) => wanted.some((p) => overlap(r.pattern, p))) : all;
  return { repo: repo.id, root: repo.root, reservations: sortReservations(shown) };
}

// For each concrete path (relative to cwd, or absolute), the live EXCLUSIVE reservations of
// another holder that cover it: what the guard and the PreToolUse hook refuse. A path outside
// the repository is never blocked. The hook asks on every edit, so: the session's repository is
// worked out once, one read fetches the sets of every repository and alias the paths are in,
// and the holder's name is worked out only when someone else's reservation covers a path (the
// hook's common case is none).
export async function blockers(store: Store, paths: string[], opts: { as?: string; cwd: string }): Promise<{ path: string; by: Reservation }[]> {
  const settings = { repoName: store.repoName };
  const session = repoOf(opts.cwd, store.host, settings);
  const places = paths.map((path) => fileRepos(path, opts.cwd, store.host, settings, session));
  const ids = places.flat().flatMap((at) => [at.repo.id, ...at.repo.aliases]);
  if (!ids.length) return [];
  const now = nowSec();
  const sets = new Map<string, Reservation[]>();
  for (const r of await reservationStorage(store).liveMany(ids)) {
    if (!sets.has(r.repo)) sets.set(r.repo, []);
    sets.get(r.repo)!.push(r);
  }
  const found: { path: string; by: Reservation }[] = [];
  for (const at of places) {
    // A repository's own set before its aliases', one (holder, pattern) once; a reservation met
    // at two roots (a nested repository under A2A_REPO has the session's identity) counted once.
    const seen = new Set<Reservation>();
    for (const { repo, rel } of at) {
      for (const r of onceEach([repo.id, ...repo.aliases].flatMap((id) => sets.get(id) ?? []))) {
        if (r.exclusive && r.expires_at > now && !seen.has(r) && covers(r.pattern, rel)) found.push({ path: rel, by: r }), seen.add(r);
      }
    }
  }
  if (!found.length) return [];
  const me = await holderOf(store, opts.as, opts.cwd);
  return found.filter((f) => f.by.holder !== me);
}

// Every live reservation of every repository, by repository then pattern (the dashboard).
export async function allReservations(store: Store): Promise<Reservation[]> {
  const storage = reservationStorage(store);
  const now = nowSec();
  const out: Reservation[] = [];
  for (const repo of await storage.repos()) out.push(...sortReservations(live(await storage.live(repo), now)));
  return out;
}

// Removes one reservation, named by repository, holder and pattern (the dashboard's release,
// which a person confirms: `a2a release PATTERN --as HOLDER` in that repository). False: it was
// not there (released or expired meanwhile); nothing is written then.
export async function dropReservation(store: Store, which: { repo: string; holder: string; pattern: string }): Promise<boolean> {
  const storage = reservationStorage(store);
  const same = (r: Reservation) => r.holder === which.holder && r.pattern === which.pattern;
  if (!(await storage.live(which.repo)).some(same)) return false;
  let dropped = false;
  await storage.change(which.repo, (current) => {
    dropped = live(current, nowSec()).some(same);
    return live(current, nowSec()).filter((r) => !same(r));
  });
  return dropped;
}

// For gc: drops the expired reservations of every repository (a set left with none is removed
// on files), each in the repository's turn like any change. Returns how many were dropped.
export async function sweepReservations(store: Store): Promise<number> {
  const storage = reservationStorage(store);
  let dropped = 0;
  for (const repo of await storage.repos()) {
    if (!(await storage.live(repo)).some((r) => r.expires_at <= nowSec())) continue;
    await storage.change(repo, (current) => {
      const kept = live(current, nowSec());
      dropped += current.length - kept.length;
      return kept;
    });
  }
  return dropped;
}
