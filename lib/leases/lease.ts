// Leases on names: a reservation of anything (files, a branch, a port) by a holder until a
// time, taken all-or-nothing for several names at once.
//
//   a record per name, versioned (storage.ts; the file engine keeps it as a chain of files):
//   {"a2a":1,"name","version","holder":H|null,"taken_at","expires_at","host","pid"}
//
// A name is free when it has no record, its record has holder null (released) or its
// expires_at has passed. Every change is one compare-and-set on the name's version, so of two
// takers of a free name exactly one wins, with no lock to leave behind.
//
// take NAMES as H: in sorted order, for each name write version + 1 = held by H (free, or
// already H's: extended). When one is held by someone else, every name this call wrote is
// put back as it was (free, or H's with its old expiry; only where the head is still the
// version this call wrote) and the call fails as a whole, naming each holder and expiry;
// with `wait` it blocks on the first held name (and looks again every
// RECHECK_MS) and tries again. Sorted order means two takers of overlapping sets cannot keep
// undoing each other forever. untakeLeases puts a whole take back the same way, for a taker
// that never learnt of it (an MCP answer that was cancelled or could not be written).
// A refusal seen up front writes nothing. A crash in the middle of a take leaves the names
// taken so far held until their TTL ends;
// nothing is ever left held forever.
//
// A name whose newest version is damaged (storage.ts) is refused by take and renew, naming
// it, and passed over by list; release (by anyone: its holder cannot be read) repairs it by
// writing a free version above the damage.

import { type Store } from "../core/config";
import { A2AError, arg, damageOf, op, text } from "../core/errors";
import { done, type Outcome } from "../core/outcome";
import { checkAgent, checkName } from "../core/names";
import { checkDuration, isoTime, nowSec } from "../core/time";
import { checkTimeout, waitUntil } from "../core/watch";
import { RECHECK_MS, type DamagedChain } from "../tasks/state";
import { leaseStorage, type Damage, type LeaseHead, type LeaseRecord } from "./storage";

export interface LeaseInfo {
  name: string;
  holder: string;
  taken_at: number;
  expires_at: number;
}

export const DEFAULT_LEASE_TTL_SEC = 300;
export const MAX_LEASE_NAMES = 1000;

const held = (r: LeaseRecord | undefined, now: number): r is LeaseRecord & { holder: string } => !!r && r.holder !== null && r.expires_at > now;
const infoOf = (r: LeaseRecord): LeaseInfo => ({ name: r.name, holder: r.holder!, taken_at: r.taken_at, expires_at: r.expires_at });

function checkNames(names: unknown): string[] {
  if (!Array.isArray(names) || names.length === 0 || names.length > MAX_LEASE_NAMES) {
    throw new A2AError("EUSAGE", `give 1 to ${MAX_LEASE_NAMES} names to lease`);
  }
  return [...new Set(names.map((n) => checkName(n, "lease name")))].sort();
}

function holderOf(store: Store, as: string | undefined): string {
  if (as !== undefined) return checkAgent(as, "holder name");
  if (store.agent) return store.agent;
  throw new A2AError("EUSAGE", text`who holds the lease? pass ${arg("as", "NAME")} or set A2A_AGENT`);
}

const head = async (store: Store, name: string) => (await named(name, () => leaseStorage(store).head(name))).record;

// `f`, with a damaged record's refusal naming the lease and its repair.
async function named<T>(name: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    const d = damageOf(err);
    if (!d) throw err;
    throw new A2AError("EIO", text`the lease on ${name} is damaged: ${d.file} is ${d.why}, not an a2a record; fix the file, or free the name with ${op("lease release", name, arg("as", "NAME"))}`, {
      data: { name, ...d, damaged: true },
    });
  }
}

// One compare-and-set on `name`; `create`: the name may be new (take only: a refused renew or
// release must leave the store as it was). `repair`: see storage.ts.
function change(store: Store, name: string, next: (cur: LeaseRecord | undefined, damaged?: Damage) => Omit<LeaseRecord, "version"> | undefined, create = false, repair = false) {
  return named(name, () => leaseStorage(store).change(name, (h: LeaseHead) => next(h.record, h.damaged), { create, repair }));
}

export interface TakeOptions {
  as?: string;
  ttlSec?: number;
  wait?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

// What a take wrote: the leases, and per name the version written and, for a lease of the
// taker's own that it extended, its times before (what untakeLeases puts back).
export interface LeaseTake {
  leases: LeaseInfo[];
  writes: { name: string; version: number; extended?: { taken_at: number; expires_at: number } }[];
}

// Takes every name or none. Without wait: done with the leases, or ECONFLICT naming the
// holders. With wait: done, timeout or aborted (pending: the names held by others).
export async function takeLeases(store: Store, names: string[], opts: TakeOptions = {}): Promise<Outcome<LeaseInfo[] | undefined>> {
  const o = await takeLeasesUndoably(store, names, opts);
  return { ...o, value: o.value?.leases };
}

// takeLeases, also returning what it wrote, so that untakeLeases can put it back.
export async function takeLeasesUndoably(store: Store, names: string[], opts: TakeOptions = {}): Promise<Outcome<LeaseTake | undefined>> {
  const wanted = checkNames(names);
  const me = holderOf(store, opts.as);
  const ttl = opts.ttlSec === undefined ? DEFAULT_LEASE_TTL_SEC : checkDuration(opts.ttlSec, "TTL", "ttl");
  checkTimeout(opts.timeoutMs);
  const first = await takeAll(store, wanted, me, ttl);
  if (!("held" in first)) return done(first);
  if (!opts.wait) throw conflict(first.held, me);
  let pending = first.held.map((h) => h.name);
  const outcome = await waitUntil(
    store,
    { on: "lease", name: pending[0] },
    async () => {
      const r = await takeAll(store, wanted, me, ttl);
      if ("held" in r) {
        pending = r.held.map((h) => h.name);
        return undefined;
      }
      return r;
    },
    { timeoutMs: opts.timeoutMs, signal: opts.signal, recheckMs: RECHECK_MS },
  );
  return outcome.kind === "done" ? outcome : { ...outcome, pending };
}

async function takeAll(store: Store, names: string[], me: string, ttl: number): Promise<LeaseTake | { held: LeaseInfo[] }> {
  const now = nowSec();
  const heads = async () => Promise.all(names.map((n) => head(store, n)));
  // A name already held by another is refused before anything is written; the undo below is
  // for one taken between this look and our change.
  const heldNow = (await heads()).filter((h): h is LeaseRecord => held(h, now) && h.holder !== me);
  if (heldNow.length) return { held: heldNow.map(infoOf) };
  const take: LeaseTake = { leases: [], writes: [] };
  for (const name of names) {
    let blocker: LeaseRecord | undefined;
    let extended: { taken_at: number; expires_at: number } | undefined;
    const r = await change(store, name, (cur) => {
      blocker = extended = undefined;
      if (held(cur, now) && cur.holder !== me) {
        blocker = cur;
        return undefined;
      }
      if (held(cur, now)) extended = { taken_at: cur.taken_at, expires_at: cur.expires_at };
      return { a2a: 1, name, holder: me, taken_at: extended ? cur!.taken_at : now, expires_at: now + ttl, host: store.host, pid: process.pid };
    }, true);
    if (blocker) {
      await untakeLeases(store, take);
      const heldBy = (await heads()).filter((h): h is LeaseRecord => held(h, now) && h.holder !== me);
      return { held: heldBy.length ? heldBy.map(infoOf) : [infoOf(blocker)] };
    }
    const rec = r.head.record!;
    take.writes.push({ name, version: rec.version, ...(extended ? { extended } : {}) });
    take.leases.push(infoOf(rec));
  }
  return take;
}

// Puts back what `take` wrote, name by name, where the head is still the version it wrote (so
// a later take, renew or release is never undone): a lease the taker extended gets its old
// times back, a name it took is free again. Returns the names put back.
export async function untakeLeases(store: Store, take: LeaseTake): Promise<string[]> {
  const back: string[] = [];
  for (const w of take.writes) {
    const r = await change(store, w.name, (cur) => {
      if (!cur || cur.version !== w.version) return undefined;
      return { ...cur, ...(w.extended ?? { holder: null }), host: store.host, pid: process.pid };
    });
    if (r.changed) back.push(w.name);
  }
  return back;
}

function conflict(heldBy: LeaseInfo[], me: string): A2AError {
  const who = heldBy.map((h) => `${h.name} by ${h.holder} until ${isoTime(h.expires_at)}`).join(", ");
  return new A2AError("ECONFLICT", text`cannot lease as ${me}: held: ${who}; nothing was taken. Wait for them with ${arg("wait")}, or see ${op("lease list")}`, {
    data: { held: heldBy },
  });
}

// Extends leases `as` holds (one that ran out but was not taken by anyone is still its own).
export async function renewLeases(store: Store, names: string[], opts: { as?: string; ttlSec?: number } = {}): Promise<LeaseInfo[]> {
  const wanted = checkNames(names);
  const me = holderOf(store, opts.as);
  const ttl = opts.ttlSec === undefined ? DEFAULT_LEASE_TTL_SEC : checkDuration(opts.ttlSec, "TTL", "ttl");
  const renewed: LeaseInfo[] = [];
  for (const name of wanted) {
    const r = await change(store, name, (cur) => {
      if (!cur || cur.holder !== me) throw notHolder(name, me, cur);
      return { ...cur, expires_at: nowSec() + ttl, host: store.host, pid: process.pid };
    });
    renewed.push(infoOf(r.head.record!));
  }
  return renewed;
}

// Releases leases `as` holds; names already free are left alone, damaged ones are freed.
// Returns the names released.
export async function releaseLeases(store: Store, names: string[], opts: { as?: string } = {}): Promise<string[]> {
  const wanted = checkNames(names);
  const me = holderOf(store, opts.as);
  const now = nowSec();
  const storage = leaseStorage(store);
  for (const name of wanted) {
    const h = await storage.head(name, true);
    if (!h.damaged && held(h.record, now) && h.record.holder !== me) throw notHolder(name, me, h.record);
  }
  const released: string[] = [];
  for (const name of wanted) {
    const r = await change(store, name, (cur, damaged) => {
      if (damaged) return { a2a: 1, name, holder: null, taken_at: cur?.taken_at ?? now, expires_at: cur?.expires_at ?? now, host: store.host, pid: process.pid };
      if (!cur || cur.holder === null) return undefined;
      if (cur.holder !== me) {
        if (cur.expires_at > nowSec()) throw notHolder(name, me, cur);
        return undefined; // someone else's, run out: not ours to release
      }
      return { ...cur, holder: null, host: store.host, pid: process.pid };
    }, false, true);
    if (r.changed) released.push(name);
  }
  return released;
}

function notHolder(name: string, me: string, cur: LeaseRecord | undefined): A2AError {
  const now = cur?.holder ? `held by ${cur.holder} until ${isoTime(cur.expires_at)}` : "free";
  return new A2AError("ECONFLICT", text`${me} does not hold the lease on ${name}: it is ${now}; take it with ${op("lease take", name)}`, {
    data: { name, holder: cur?.holder ?? null },
  });
}

// Leases currently held (all, or of `names`), by name; a damaged one is passed over into `damaged`.
export async function listLeases(store: Store, names?: string[], damaged?: DamagedChain[]): Promise<LeaseInfo[]> {
  const storage = leaseStorage(store);
  const wanted = names === undefined ? await storage.names() : checkNames(names);
  const now = nowSec();
  const heads: (LeaseRecord | undefined)[] = [];
  for (const name of wanted) {
    const h = await storage.head(name, true);
    if (h.damaged) damaged?.push({ kind: "lease", name, ...h.damaged });
    heads.push(h.damaged ? undefined : h.record);
  }
  return heads.filter((h): h is LeaseRecord => held(h, now)).map(infoOf);
}
