// A chain: a record kept as one file per version in its own directory, DIR/NNNNNNNN.json,
// each created exclusively (lib/fs/atomic.ts createAtomic = link) and never rewritten.
// The current record is the highest version. A change computed from version N is written as
// version N + 1 and lands only if nobody else wrote N + 1 first: link(2) is exclusive on every
// filesystem, NFS included, so this is a compare-and-set that needs no lock, cannot be left
// held by a dead process, and cannot be broken by a frozen one (a writer that wakes up late
// finds N + 1 taken and must read again). Tasks and leases are built on it.
//
// Invariants:
// - a version file is whole from the instant it exists (written in tmp/, then linked) and is
//   never changed or removed while the chain is in use; removing versions would let a late
//   writer recreate a removed N + 1, so a chain is only ever removed as a whole (by gc);
// - every record carries `version` equal to its file's number, so a foreign or misplaced file
//   is not mistaken for one;
// - the head is found by listing the directory and, on a network filesystem, then probing
//   upwards by name: a listing may lag there (a client's cache), a lookup of the next name
//   may lag too, but a stale head only costs a lost compare-and-set, never a wrong write;
// - a version whose loss is harmless MAY be written without fsync (changeChain's `durable`).
//   A power cut can then leave its name with no bytes (empty, or NUL bytes): a hole. A head
//   that stays a hole is read as the whole version below it, renumbered as the hole, so the
//   next change is written above the hole and nobody ever writes into it. Only a power cut
//   makes a hole: a linked file is whole in the page cache from the instant it has a name.
// - a head that is neither a record nor a hole (foreign bytes, a FIFO, a link) is damage: the
//   chain is refused, naming the file, and callers going over many chains pass over it; only
//   a repair (changeChain's `repair`) writes above it, from the newest whole version below.

import { relative } from "node:path";
import type { Store } from "../core/config";
import { createAtomic, type WriteOptions } from "./atomic";
import { A2AError, damageOf, type Damage } from "../core/errors";
import { entries, readJsonLine } from "./io";
import { fitRecord } from "../core/record";
import { versionFile, versionOf } from "./paths";

export interface Versioned {
  version: number;
}

export interface Head<T> {
  version: number; // 0 when the chain has no version yet
  value: T | undefined;
  damaged?: Damage; // read with `repair`: the head is damaged; value is the newest whole version below, if any
}

// A chain whose head is neither a record nor a hole (foreign bytes, a FIFO, a link) is damage
// (lib/core/errors.ts damageOf).
export { damageOf, type Damage };

const TORN_RETRIES = 5;

// The highest version of the chain in `dir` (version 0, no value, when there is none).
// `decode` returns undefined for anything that is not a record of this chain. A damaged head
// is an EIO naming its file (damageOf), unless `repair`: then it is returned, with the newest
// whole version below it, for a writer that puts a good version above it.
export function readHead<T extends Versioned>(store: Store, dir: string, decode: (v: any) => T | undefined, repair = false): Head<T> {
  for (let attempt = 0; ; attempt++) {
    let n = 0;
    for (const f of entries(store, dir)) {
      const v = versionOf(f);
      if (v !== undefined && v > n) n = v;
    }
    // A local filesystem's listing is the directory at that instant; a network one's may
    // lag behind its lookups, so there the names above the highest listed are tried too.
    while (listingMayLag(store)) {
      const next = readJsonLine(store, versionFile(dir, n + 1), decode);
      if (next.kind === "absent") break;
      n++;
    }
    if (n === 0) return { version: 0, value: undefined };
    const r = readJsonLine(store, versionFile(dir, n), decode);
    if (r.kind === "ok" && r.value.version === n) return { version: n, value: r.value };
    // Listed but not readable whole: on a network filesystem, maybe a cache lagging behind the
    // link, so read again. A local one has no such lag (a linked file is whole from the instant
    // it has a name): what is there is a hole or damage, at once.
    if (attempt >= TORN_RETRIES || !listingMayLag(store)) {
      const below = r.kind === "invalid" && r.lost ? wholeBelow(store, dir, n, decode) : undefined;
      if (below) return { version: n, value: { ...below, version: n } };
      const damaged = { file: versionFile(dir, n), why: r.kind === "invalid" ? r.why : "unreadable" };
      if (repair) return { version: n, value: wholeBelow(store, dir, n, decode, true), damaged };
      throw new A2AError("EIO", `${damaged.file} is ${damaged.why}, not an a2a record: check the file; a2a never writes one like it`, {
        data: { ...damaged, damaged: true },
      });
    }
    Bun.sleepSync(1 + attempt * 5);
  }
}

export const listingMayLag = (store: Store): boolean => (store.listingMayLag ??= store.platform.filesystem(store.root).kind !== "local");

// The highest whole version below the hole at `n` (holes below it skipped too; with
// `pastDamage`, any version that is not whole), or undefined.
function wholeBelow<T extends Versioned>(store: Store, dir: string, n: number, decode: (v: any) => T | undefined, pastDamage = false): T | undefined {
  for (let v = n - 1; v >= 1; v--) {
    const r = readJsonLine(store, versionFile(dir, v), decode);
    if (r.kind === "ok" && r.value.version === v) return r.value;
    if (!pastDamage && !(r.kind === "invalid" && r.lost)) return undefined;
  }
  return undefined;
}

// Writes `value` as version `value.version` of the chain; false when that version exists
// already (someone else changed the record since it was read: read again and recompute).
export function appendVersion<T extends Versioned>(store: Store, dir: string, value: T, encode: (v: T) => string, opts: WriteOptions = {}): boolean {
  const line = fitRecord(store, encode(value), `the record ${relative(store.root, dir)} (version ${value.version})`);
  return createAtomic(store, versionFile(dir, value.version), line, opts);
}

// Compare-and-set loop: read the head, let `next` compute the following record (or return
// undefined: nothing to change, or throw an A2AError: refused), write it as version + 1;
// on a lost race read again. Returns the head written or, when nothing changed, the head read.
// Each lost race means another writer made progress, so the loop ends. `repair`: a damaged
// head is handed to `next` (head.damaged) instead of refused, and the version written goes
// above it: the one way a damaged chain becomes readable again.
export function changeChain<T extends Versioned>(
  store: Store,
  dir: string,
  decode: (v: any) => T | undefined,
  encode: (v: T) => string,
  next: (head: Head<T>) => T | undefined,
  durable: (value: T) => boolean = () => true,
  repair = false,
): { head: Head<T>; changed: boolean } {
  for (;;) {
    const head = readHead(store, dir, decode, repair);
    const value = next(head);
    if (value === undefined) return { head, changed: false };
    const written = { ...value, version: head.version + 1 };
    if (appendVersion(store, dir, written, encode, { durable: durable(written) })) return { head: { version: written.version, value: written }, changed: true };
  }
}
