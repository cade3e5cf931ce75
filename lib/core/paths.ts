// The store's tree. This is the only module that knows directory and file names; see
// docs/PROTOCOL.md for the contract other implementations rely on.
//
//   ROOT/tmp/                     temp files of every atomic write (never watched)
//   ROOT/slots/NAME.json          one record per slot
//   ROOT/locks/NAME.lock/         mkdir lock for read-modify-write of slot NAME
//   ROOT/streams/NAME/NNNNNNNNNN  chunk files of slot NAME's current run, 1-based
//
// Names never start with "." so dot-files anywhere are foreign or temporary and are skipped.

import { join } from "node:path";
import { A2AError } from "./errors";
import type { Store } from "./config";

export const NAME_RULE = "names are 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'";
const NAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function isValidName(name: unknown): name is string {
  return typeof name === "string" && NAME_RE.test(name);
}

// Throws a usage error naming the rule; the only gate between user input and a path.
export function checkName(name: unknown, what = "name"): string {
  if (!isValidName(name)) {
    const shown = typeof name === "string" ? JSON.stringify(name.length > 60 ? name.slice(0, 60) + "…" : name) : String(name);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: ${NAME_RULE}`);
  }
  return name;
}

export const SLOT_EXT = ".json";
export const CHUNK_DIGITS = 10;

export const tmpDir = (s: Store) => join(s.root, "tmp");
export const slotsDir = (s: Store) => join(s.root, "slots");
export const locksDir = (s: Store) => join(s.root, "locks");
export const streamsDir = (s: Store) => join(s.root, "streams");
export const slotFile = (s: Store, name: string) => join(slotsDir(s), name + SLOT_EXT);
export const lockFile = (s: Store, name: string) => join(locksDir(s), name + ".lock");
export const streamDir = (s: Store, name: string) => join(streamsDir(s), name);
export const chunkFile = (s: Store, name: string, n: number) =>
  join(streamDir(s, name), String(n).padStart(CHUNK_DIGITS, "0"));

// The slot name a file in slots/ belongs to, or undefined for temp/foreign files.
export function slotNameOf(fileName: string): string | undefined {
  if (!fileName.endsWith(SLOT_EXT)) return undefined;
  const name = fileName.slice(0, -SLOT_EXT.length);
  return isValidName(name) ? name : undefined;
}
