// Attachments: a message, a slot's result or a task's result naming blobs (§19) it hands over
// with it. The record holds only the reference; the bytes are the blob's.
//
// Invariants:
// - an attachment names a blob the store holds when the record is written: its size is the
//   store's, never the caller's word (room.ts checkAttachments);
// - a record with no attachments is encoded without the field, byte for byte as before;
// - a name is for people and tools to show and save under: one path component, no control
//   characters, at most 255 bytes; it is never used as a path inside the store.
// This module is pure (records decode with it): it reaches no storage.

import { utf8Length } from "../core/utf8";


export interface Attachment {
  digest: string; // sha256:HEX
  name: string; // the file's name, as the sender gave it
  size: number; // bytes, as stored
  type: string; // media type, from the name's extension
}

export const MAX_ATTACHMENTS = 64;
export const NAME_RULE = "an attachment's name is one file name: 1-255 bytes, no '/', no control characters";

const TYPES: Record<string, string> = {
  txt: "text/plain", log: "text/plain", md: "text/markdown", csv: "text/csv", tsv: "text/tab-separated-values",
  json: "application/json", jsonl: "application/jsonl", ndjson: "application/x-ndjson", yaml: "application/yaml", yml: "application/yaml",
  sql: "application/sql", xml: "application/xml", html: "text/html", htm: "text/html", css: "text/css", js: "text/javascript", mjs: "text/javascript",
  ts: "text/x-typescript", py: "text/x-python", sh: "text/x-shellscript", diff: "text/x-diff", patch: "text/x-diff",
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", svg: "image/svg+xml",
  pdf: "application/pdf", zip: "application/zip", gz: "application/gzip", tgz: "application/gzip", tar: "application/x-tar",
  zst: "application/zstd", xz: "application/x-xz", bz2: "application/x-bzip2", parquet: "application/vnd.apache.parquet",
  sqlite: "application/vnd.sqlite3", db: "application/vnd.sqlite3", wasm: "application/wasm", mp4: "video/mp4", webm: "video/webm",
};

// The media type of a file named `name`, by its extension; application/octet-stream when unknown.
export function mediaType(name: string): string {
  const dot = name.lastIndexOf(".");
  return (dot > 0 && TYPES[name.slice(dot + 1).toLowerCase()]) || "application/octet-stream";
}

export function isAttachmentName(name: unknown): name is string {
  return typeof name === "string" && name.length > 0 && utf8Length(name) <= 255 && !name.includes("/") && name !== "." && name !== ".." && !/[\u0000-\u001f\u007f]/.test(name);
}

// The attachments a stored record holds, or undefined (none, or a field that is not a list of
// attachments: a reader shows the record without them rather than failing it).
export function attachmentsOf(value: unknown): Attachment[] | undefined {
  if (!Array.isArray(value) || !value.length) return undefined;
  const ok = value.every((a) => a && typeof a.digest === "string" && /^sha256:[0-9a-f]{64}$/.test(a.digest) && isAttachmentName(a.name) && Number.isSafeInteger(a.size) && typeof a.type === "string");
  return ok ? value.map(({ digest, name, size, type }) => ({ digest, name, size, type })) : undefined;
}
