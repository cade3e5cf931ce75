// The size bound of one record, the same for every engine and every reader: a record a reader
// would refuse is a lost record, so a writer checks what it is about to write against the bound
// every reader applies (RECORD_LIMIT), whatever its own A2A_MAX_BYTES.

import type { Store } from "./config";
import { A2AError } from "./errors";
import { utf8Length } from "./utf8";

// The most A2A_MAX_BYTES may be (lib/core/config.ts refuses more). Each process reads the
// setting from its own environment, so a reader's bound cannot follow the writer's setting:
// every reader accepts a record of this payload instead (RECORD_LIMIT), whatever its own.
export const MAX_MAX_BYTES = 16 * 1024 * 1024;

// The size bound every reader applies to a record, whatever its own A2A_MAX_BYTES (a writer's
// may be higher): a payload of the most A2A_MAX_BYTES may be, JSON-escaped at worst six bytes
// a byte, plus 1 MiB for its other fields (a task's 20 kept attempts with their reasons, its
// key and dependencies). A file over it is not read past it (readBounded).
export const RECORD_LIMIT = MAX_MAX_BYTES * 6 + 1024 * 1024;

// `line`, the encoded record about to be written, if a reader will accept it; else ETOOBIG,
// before anything is written. Each field's own check (checkSize) bounds what a user sends; a
// record holding two large fields (a slot's task and result, a task's payload and result) or
// control characters (each escaped as six bytes) can still pass those and come out over the
// readers' bound, and a record no reader accepts is a lost record. So the writer checks the
// bytes it is about to write against the same bound the readers use (docs/FILE-ENGINE.md §3 step 0).
export function fitRecord(store: Store, line: string, what: string): string {
  const limit = RECORD_LIMIT;
  if (line.length * 3 <= limit) return line; // a UTF-16 unit is at most 3 UTF-8 bytes
  const bytes = utf8Length(line);
  if (bytes <= limit) return line;
  throw new A2AError(
    "ETOOBIG",
    `${what} would be ${bytes} bytes once encoded, over the ${limit} bytes every reader accepts (6 x 16 MiB + 1 MiB; JSON writes each control character as 6 bytes): make it smaller, or encode binary data (base64) first; nothing was changed`,
    { data: { bytes, limit } },
  );
}
