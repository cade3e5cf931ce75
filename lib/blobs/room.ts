// Blobs: bytes of any size stored once under their SHA-256 (`a2a put`, `a2a get`), so an agent
// can hand over a build log, a dataset or a screenshot whole, and a message, a result or a task
// names it by digest (an attachment). docs/PROTOCOL.md §19 is the contract.
//
// Invariants:
// - a blob's digest is computed here, from the bytes as they stream past, never taken from a
//   caller: `sha256:HEX` names exactly the bytes stored;
// - memory stays bounded whatever the size: bytes move in pieces of at most CHUNK;
// - a put that fails (its source breaks, the disk fills) aborts its upload: the store is as it
//   was, and no blob is visible;
// - every get checks the bytes it hands out against the digest and the size: a truncated or
//   damaged blob ends in EIO naming it, after the bytes (a caller writing a file drops it); a
//   blob someone else could change (storage.sealed) is copied where nobody else can reach and
//   checked whole before the first byte, and the bytes handed out are that copy's;
// - a blob is checked before a record names it: by the put that stored it in this process, or
//   by reading it whole (checkAttachments).

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { isAttachmentName, MAX_ATTACHMENTS, mediaType, NAME_RULE, type Attachment } from "./attachment";
import { blobStorage, CHUNK, type Scratch } from "./storage";

export const DIGEST_RULE = "a blob is named sha256: and 64 hex digits, as a2a put prints it";
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;

export interface BlobRef {
  digest: string; // sha256:HEX
  size: number;
}

// The lowercase hex of a digest a user typed; EUSAGE naming the rule otherwise.
export function blobHex(digest: unknown): string {
  const m = typeof digest === "string" ? DIGEST.exec(digest.trim()) : null;
  if (!m) throw new A2AError("EUSAGE", `${JSON.stringify(String(digest).slice(0, 80))} is not a blob digest: ${DIGEST_RULE}`, { data: { digest } });
  return m[1].toLowerCase();
}

// Cuts `source`'s pieces to at most CHUNK bytes (a reader may hand over any size).
async function* pieces(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const piece of source) {
    for (let off = 0; off < piece.length; off += CHUNK) yield piece.subarray(off, off + CHUNK);
  }
}

// The blobs of each store whose bytes this process put or read whole and found right, and that
// nobody else can change since (a long-lived process names them again without a read).
const verified = new WeakMap<Store, Set<string>>();
const verifiedOf = (store: Store) => verified.get(store) ?? verified.set(store, new Set()).get(store)!;
const remember = (store: Store, hex: string) => {
  if (blobStorage(store).sealed?.(hex) !== false) verifiedOf(store).add(hex);
};

// Stores the bytes of `source` as a blob. `fresh`: false when those bytes were stored already.
export async function putBlob(store: Store, source: AsyncIterable<Uint8Array>): Promise<BlobRef & { fresh: boolean }> {
  const up = await blobStorage(store).begin();
  const hash = new Bun.CryptoHasher("sha256");
  let size = 0;
  try {
    for await (const piece of pieces(source)) {
      hash.update(piece);
      size += piece.length;
      await up.write(piece);
    }
    const hex = hash.digest("hex");
    const { fresh } = await up.commit(hex, size);
    remember(store, hex);
    return { digest: `sha256:${hex}`, size, fresh };
  } catch (err) {
    await up.abort().catch(() => {});
    throw err;
  }
}

// The size and time of blob `digest`, or ENOTFOUND.
export async function statBlob(store: Store, digest: string): Promise<BlobRef & { at: number }> {
  const hex = blobHex(digest);
  const info = await blobStorage(store).stat(hex);
  if (!info) throw notFound(hex);
  return { digest: `sha256:${hex}`, size: info.size, at: info.at };
}

// Where this machine may read blob `digest` as a file (the file engine), else undefined.
export async function blobPath(store: Store, digest: string): Promise<string | undefined> {
  return blobStorage(store).path(blobHex(digest));
}

// Hands the bytes of blob `digest` to `sink` in order, then checks them: ENOTFOUND when there is
// no such blob, EIO when the bytes handed out are not the blob's (truncated or damaged).
export async function getBlob(store: Store, digest: string, sink: (bytes: Uint8Array) => void | Promise<void>): Promise<BlobRef> {
  const hex = blobHex(digest);
  const storage = blobStorage(store);
  const info = await storage.stat(hex);
  if (!info) throw notFound(hex);
  if (storage.sealed?.(hex) === false) {
    // Another member's file can change between any two reads of it: it is read once, into a
    // scratch file only this process can reach, and what is handed out is that copy, checked.
    const copy = storage.scratch!();
    try {
      await pass(store, hex, info.size, (b) => copy.write(b));
      await check(hex, info.size, replay(copy), sink);
    } finally {
      copy.close();
    }
  } else await pass(store, hex, info.size, sink);
  remember(store, hex);
  return { digest: `sha256:${hex}`, size: info.size };
}

async function* replay(copy: Scratch): AsyncIterable<Uint8Array> {
  for (let pos = 0; ; ) {
    const buf = new Uint8Array(CHUNK);
    const n = copy.read(pos, buf);
    if (n === 0) return;
    pos += n;
    yield buf.subarray(0, n);
  }
}

// One read of blob `hex` into `sink`, checked at its end against the digest and `expected` size.
async function pass(store: Store, hex: string, expected: number, sink: (bytes: Uint8Array) => void | Promise<void>): Promise<void> {
  const bytes = await blobStorage(store).read(hex);
  if (!bytes) throw notFound(hex);
  await check(hex, expected, bytes, sink);
}

async function check(hex: string, expected: number, bytes: AsyncIterable<Uint8Array>, sink: (bytes: Uint8Array) => void | Promise<void>): Promise<void> {
  const hash = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const piece of bytes) {
    hash.update(piece);
    size += piece.length;
    if (size > expected) break; // a file growing under the read is not the blob: no byte more
    await sink(piece);
  }
  const got = hash.digest("hex");
  if (got !== hex || size !== expected) {
    throw new A2AError("EIO", text`blob sha256:${hex} is damaged in the store (${size} bytes read of ${expected}, hashing to sha256:${got}): what was handed out is not the blob; store the file again (${op("put", "FILE")})`, {
      data: { digest: `sha256:${hex}`, size: expected, read: size, got: `sha256:${got}` },
    });
  }
}

const notFound = (hex: string) =>
  new A2AError("ENOTFOUND", text`there is no blob sha256:${hex} in this store: check the digest, or store the file there first (${op("put", "FILE")})`, { data: { digest: `sha256:${hex}` } });

// The attachments a caller asked for, each checked against the store: the blob is there, its
// bytes are its digest's (read whole unless this process just stored or read them), its size
// is the store's. `asked`: {digest, name} pairs (a front end puts the files first).
export async function checkAttachments(store: Store, asked: readonly { digest: string; name: string }[] | undefined): Promise<Attachment[] | undefined> {
  if (!asked?.length) return undefined;
  if (asked.length > MAX_ATTACHMENTS) throw new A2AError("EUSAGE", `${asked.length} attachments: at most ${MAX_ATTACHMENTS} go with one record; put the files in one archive (tar c ... | a2a put -) and attach that`);
  const out: Attachment[] = [];
  for (const a of asked) {
    if (!isAttachmentName(a.name)) throw new A2AError("EUSAGE", `invalid attachment name ${JSON.stringify(String(a.name).slice(0, 60))}: ${NAME_RULE}`);
    const b = await statBlob(store, a.digest);
    if (!verifiedOf(store).has(blobHex(a.digest))) await pass(store, blobHex(a.digest), b.size, () => {});
    await blobStorage(store).touch?.(blobHex(a.digest)); // gc's grace counts from here (lib/maintenance/blobs.ts)
    out.push({ digest: `sha256:${blobHex(a.digest)}`, name: a.name, size: b.size, type: mediaType(a.name) });
  }
  return out;
}

