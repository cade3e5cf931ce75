// What the blob rules (room.ts) need from an engine: bytes kept under the SHA-256 the room
// computed of them, written by streaming and read back by streaming. The rules (the digest,
// its check on every read, what a digest looks like, the wording of errors) are the room's; an
// engine keeps bytes. docs/PROTOCOL.md §19 is the contract, docs/FILE-ENGINE.md §15 the file
// engine's layout, docs/PG-ENGINE.md the tables.
//
// Invariants every engine keeps:
// - an upload is invisible until `commit`: a put killed midway (or `abort`ed, or failing on a
//   full disk) leaves nothing a reader or `has` sees, only staging that `sweep` removes;
// - a blob, once committed, never changes: two commits of one digest keep one copy (the second
//   is `fresh: false` and its staging is dropped);
// - `read` streams a stored blob in pieces of at most CHUNK bytes, so memory stays bounded
//   whatever its size; it does not check the bytes (the room does, against the digest);
// - a blob is removed only by `remove`, which gc calls with its own checks.

import type { Store } from "../core/config";

// The largest piece an engine writes or reads at once.
export const CHUNK = 1024 * 1024;

// gc's floor on the age of a blob it removes (lib/maintenance/blobs.ts says why); the
// PostgreSQL engine's server holds every role's hand-made delete to it too (lib/pg/blob-trust.ts).
export const BLOB_GRACE_FLOOR_MS = 10 * 60 * 1000;

export interface BlobInfo {
  hex: string; // the SHA-256, lowercase hex
  size: number; // bytes
  at: number; // when it was stored (unix ms)
}

// One put in progress: its bytes are written in order, then committed under their digest.
export interface Upload {
  write(bytes: Uint8Array): Promise<void>;
  // Makes the bytes written visible as blob `hex` (`size` bytes): fresh: false when that blob
  // was there already (this upload's bytes are dropped).
  commit(hex: string, size: number): Promise<{ fresh: boolean }>;
  abort(): Promise<void>; // drops what was written; safe after a failed write or commit
}

// A scratch file of this process alone: bytes written go to its end; read(pos, buf) reads from
// any offset; close() frees it. No other user can open, change or remove it.
export interface Scratch {
  write(bytes: Uint8Array): void;
  read(pos: number, buf: Uint8Array): number;
  close(): void;
}

export interface BlobStorage {
  begin(): Promise<Upload>;
  stat(hex: string): Promise<BlobInfo | undefined>;
  // The stored bytes of `hex`, in order (undefined: no such blob). A blob removed or damaged
  // while it is read ends early or differs: the room's check of size and digest finds it.
  read(hex: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  // Where a process on this machine may read the blob as a file (the file engine), else
  // undefined: only a file nobody else can change, whose bytes were checked against `hex` (by
  // the put that made it, for this user's own).
  path(hex: string): string | undefined | Promise<string | undefined>;
  // False when someone else than this user could change the stored bytes after a check (a
  // shared store's blob another member put first): a reader then checks them before handing
  // any out. Missing: true.
  sealed?(hex: string): boolean;
  // Where a reader of a blob that is not sealed copies its bytes before checking them: present
  // wherever `sealed` can say false.
  scratch?(): Scratch;
  list(): Promise<BlobInfo[]>;
  // Moves the blob's time to now where this user may (a record is about to name it: gc's
  // grace period counts from here). Missing: a put's time stands.
  touch?(hex: string): Promise<void>;
  // Removes blob `hex` if it was stored before `before` (unix ms); whether it did.
  remove(hex: string, before: number): Promise<boolean>;
  // Removes the staging of uploads begun before `before` that never committed; how many.
  sweep(before: number): Promise<number>;
}

// The store's blob storage, as its engine keeps it (lib/engine/engine.ts).
export function blobStorage(store: Store): BlobStorage {
  return store.engine.blobs;
}
