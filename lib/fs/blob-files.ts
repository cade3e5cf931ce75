// Which file of blobs/sha256/ holds a blob (docs/FILE-ENGINE.md §14a). Blob HEX is the file
// HEX; in a shared store a member who finds that name held by another member's file keeps a
// copy of its own beside it, HEX.UID (HEX.UID.RANDOM when someone else took that name first):
// the owner of a file may always remove it, make it unreadable or change it, so what a member
// names must never hang on another member's file.
//
// A reader takes, in order: the file named HEX when nobody else can change it (its own, root's,
// any in a private store); its own copy; the first file whose bytes are the blob's; else any
// file there, whose read then reports the damage. Which member put a blob is nobody's business
// here: a file is believed for its owner (sealed) or for its bytes, checked.

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import type { Store } from "../core/config";
import { CHUNK } from "../blobs/storage";
import { ioError } from "../core/errors";
import { entries, lstatIf } from "./io";
import { checkStore, myUid } from "./guard";
import { blobFile, blobsDir } from "./paths";

export const HEX = /^[0-9a-f]{64}$/;
const COPY = /^([0-9a-f]{64})\.\d+(?:\.[0-9a-f]{16})?$/;

// The digest a name of blobs/sha256/ stands for (the blob's own name, or a copy's); else undefined.
export const hexOfName = (name: string): string | undefined => (HEX.test(name) ? name : COPY.exec(name)?.[1]);

// Where this user keeps its own copy of blob `hex`; `taken`: the name someone else took first.
export function copyPath(store: Store, hex: string, taken = false): string {
  const tail = taken ? `.${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}` : "";
  return join(blobsDir(store), `${hex}.${myUid()}${tail}`);
}

// Opens the blob file `path` for reading: undefined when it is missing or no regular file (a
// FIFO or device planted under a blob's name is no blob), or, `unreadable`, one we may not read.
export function openBlob(path: string, unreadable = false): { fd: number; st: Stats } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || (unreadable && code === "EACCES")) return undefined;
    throw ioError(err, `reading ${path}`);
  }
  const st = fstatSync(fd);
  if (st.isFile()) return { fd, st };
  closeSync(fd);
  return undefined;
}

// Whether the file at `path` is a regular file of `size` bytes (when given) hashing to `hex`.
export function blobFileHolds(path: string, hex: string, size?: number): boolean {
  const open = openBlob(path, true);
  if (!open) return false;
  try {
    if (size !== undefined && open.st.size !== size) return false;
    const hash = new Bun.CryptoHasher("sha256");
    const buf = Buffer.allocUnsafe(CHUNK);
    let total = 0;
    for (let n; (n = readSync(open.fd, buf, 0, CHUNK, null)) > 0; ) {
      hash.update(buf.subarray(0, n));
      if ((total += n) > open.st.size) return false; // growing under the read
    }
    return hash.digest("hex") === hex;
  } finally {
    closeSync(open.fd);
  }
}

// Whether only this user (or root) can change the file: another member owns what it put first.
// The root is guarded first: its marker says whether the store is shared.
export function sealedBy(store: Store, st: Stats): boolean {
  checkStore(store);
  return !store.shared || st.uid === myUid() || st.uid === 0;
}

export interface BlobFile {
  path: string;
  st: Stats;
  sealed: boolean; // nobody but this user (or root) can change it
}

function fileAt(store: Store, path: string): BlobFile | undefined {
  const st = lstatIf(path, true);
  return st?.isFile() ? { path, st, sealed: sealedBy(store, st) } : undefined;
}

// Files whose bytes this process checked, by inode and change time: any write or chmod moves
// the change time, so a file changed since is checked again.
const checked = new Set<string>();

export function holds(f: BlobFile, hex: string): boolean {
  const key = `${f.st.dev}:${f.st.ino}:${f.st.ctimeMs}:${f.st.size}:${hex}`;
  if (checked.has(key)) return true;
  if (!blobFileHolds(f.path, hex, f.st.size)) return false;
  checked.add(key);
  return true;
}

// holds(), off the event loop's back: a long-lived process (a2a mcp) hashing a large file of
// another member yields between pieces, so it goes on answering meanwhile.
export async function holdsSoon(f: BlobFile, hex: string): Promise<boolean> {
  const open = openBlob(f.path, true);
  if (!open) return false;
  const key = `${open.st.dev}:${open.st.ino}:${open.st.ctimeMs}:${open.st.size}:${hex}`;
  try {
    if (checked.has(key)) return true;
    const hash = new Bun.CryptoHasher("sha256");
    const buf = Buffer.allocUnsafe(CHUNK);
    let total = 0;
    for (let n; (n = readSync(open.fd, buf, 0, CHUNK, null)) > 0; ) {
      hash.update(buf.subarray(0, n));
      if ((total += n) > open.st.size) return false; // growing under the read
      await new Promise((next) => setImmediate(next));
    }
    if (hash.digest("hex") !== hex) return false;
  } finally {
    closeSync(open.fd);
  }
  checked.add(key);
  return true;
}

// The file of blob `hex` nobody but this user (or root) can change, without reading any: the
// name's when it is such, else this user's own copy; undefined when neither is.
export function sealedFile(store: Store, hex: string): BlobFile | undefined {
  if (!HEX.test(hex)) return undefined;
  checkStore(store); // its marker says whether the store is shared
  const main = fileAt(store, blobFile(store, hex));
  if (!store.shared || main?.sealed) return main;
  const own = fileAt(store, copyPath(store, hex));
  return own?.sealed ? own : undefined;
}

// The copies of blob `hex`, from `listed` (the names of blobs/sha256/ a caller read already) or
// a reading of the directory now.
function copies(store: Store, hex: string, listed?: readonly string[]): BlobFile[] {
  const names = (listed ?? entries(store, blobsDir(store))).filter((n) => n.startsWith(`${hex}.`) && COPY.test(n));
  return names.flatMap((n) => fileAt(store, join(blobsDir(store), n)) ?? []);
}

// Every file of blob `hex`: its own name's, then the copies.
export function filesOf(store: Store, hex: string, listed?: readonly string[]): BlobFile[] {
  if (!HEX.test(hex)) return [];
  checkStore(store); // its marker says whether the store is shared
  const main = fileAt(store, blobFile(store, hex));
  return [...(main ? [main] : []), ...(store.shared ? copies(store, hex, listed) : [])];
}

// The file a reader of blob `hex` takes (see the head of this file); undefined when none.
export function pick(store: Store, hex: string, listed?: readonly string[]): BlobFile | undefined {
  if (!HEX.test(hex)) return undefined;
  checkStore(store); // its marker says whether the store is shared
  const main = fileAt(store, blobFile(store, hex));
  if (!store.shared || main?.sealed) return main;
  const own = fileAt(store, copyPath(store, hex));
  if (own?.sealed) return own;
  if (listed && !listed.some((n) => n.startsWith(`${hex}.`))) return main; // nothing else to choose
  if (main && holds(main, hex)) return main;
  const others = copies(store, hex, listed);
  return others.find((f) => f.sealed) ?? others.find((f) => holds(f, hex)) ?? main ?? others[0];
}

// pick(), hashing off the event loop's back (holdsSoon): what a long-lived process (a2a mcp)
// calls before reading another member's file of a blob of any size.
export async function pickSoon(store: Store, hex: string, listed?: readonly string[]): Promise<BlobFile | undefined> {
  if (!HEX.test(hex)) return undefined;
  checkStore(store); // its marker says whether the store is shared
  const main = fileAt(store, blobFile(store, hex));
  if (!store.shared || main?.sealed) return main;
  const own = fileAt(store, copyPath(store, hex));
  if (own?.sealed) return own;
  if (listed && !listed.some((n) => n.startsWith(`${hex}.`))) return main; // nothing else to choose
  if (main && (await holdsSoon(main, hex))) return main;
  const others = copies(store, hex, listed);
  const sealed = others.find((f) => f.sealed);
  if (sealed) return sealed;
  for (const f of others) if (await holdsSoon(f, hex)) return f;
  return main ?? others[0];
}
