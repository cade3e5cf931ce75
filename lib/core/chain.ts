// A chain: a record kept as one file per version in its own directory, DIR/NNNNNNNN.json,
// each created exclusively (lib/core/atomic.ts createAtomic = link) and never rewritten.
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

import { relative } from "node:path";
import type { Store } from "./config";
import { createAtomic, type WriteOptions } from "./atomic";
import { A2AError } from "./errors";
import { entries, fitRecord, readJsonLine } from "./fs";
import { versionFile, versionOf } from "./paths";

export interface Versioned {
  version: number;
}

export interface Head<T> {
  version: number; // 0 when the chain has no version yet
  value: T | undefined;
}

const TORN_RETRIES = 5;

// The highest version of the chain in `dir` (version 0, no value, when there is none).
// `decode` returns undefined for anything that is not a record of this chain.
export function readHead<T extends Versioned>(store: Store, dir: string, decode: (v: any) => T | undefined): Head<T> {
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
      throw new A2AError("EIO", `${versionFile(dir, n)} is ${r.kind === "invalid" ? r.why : "unreadable"}, not an a2a record: check the file; a2a never writes one like it`, {
        data: { file: versionFile(dir, n), damaged: true },
      });
    }
    Bun.sleepSync(1 + attempt * 5);
  }
}

export const listingMayLag = (store: Store): boolean => (store.listingMayLag ??= store.platform.filesystem(store.root).kind !== "local");

// The highest whole version below the hole at `n` (holes below it skipped too), or undefined.
function wholeBelow<T extends Versioned>(store: Store, dir: string, n: number, decode: (v: any) => T | undefined): T | undefined {
  for (let v = n - 1; v >= 1; v--) {
    const r = readJsonLine(store, versionFile(dir, v), decode);
    if (r.kind === "ok" && r.value.version === v) return r.value;
    if (!(r.kind === "invalid" && r.lost)) return undefined;
  }
  return undefined;
}

// True for the error readHead throws when a chain's head is foreign (a FIFO, link, garbage):
// that one chain is damaged; callers going over many chains pass over it.
export const isDamagedChain = (err: unknown): boolean => err instanceof A2AError && (err.data as { damaged?: unknown } | undefined)?.damaged === true;

// Writes `value` as version `value.version` of the chain; false when that version exists
// already (someone else changed the record since it was read: read again and recompute).
export function appendVersion<T extends Versioned>(store: Store, dir: string, value: T, encode: (v: T) => string, opts: WriteOptions = {}): boolean {
  const line = fitRecord(store, encode(value), `the record ${relative(store.root, dir)} (version ${value.version})`);
  return createAtomic(store, versionFile(dir, value.version), line, opts);
}

// Compare-and-set loop: read the head, let `next` compute the following record (or return
// undefined: nothing to change, or throw an A2AError: refused), write it as version + 1;
// on a lost race read again. Returns the head written or, when nothing changed, the head read.
// Each lost race means another writer made progress, so the loop ends.
export function changeChain<T extends Versioned>(
  store: Store,
  dir: string,
  decode: (v: any) => T | undefined,
  encode: (v: T) => string,
  next: (head: Head<T>) => T | undefined,
  durable: (value: T) => boolean = () => true,
): { head: Head<T>; changed: boolean } {
  for (;;) {
    const head = readHead(store, dir, decode);
    const value = next(head);
    if (value === undefined) return { head, changed: false };
    const written = { ...value, version: head.version + 1 };
    if (appendVersion(store, dir, written, encode, { durable: durable(written) })) return { head: { version: written.version, value: written }, changed: true };
  }
}
