// Terminal I/O for the CLI: output through fs.writeSync (Bun's first process.stdout.write
// costs ~9 ms of start-up), stdin reading with strict UTF-8, and the parsers for the values
// users type (durations, counts). Nothing here knows about slots.
//
// Invariants:
// - every byte the CLI writes to stderr goes through `err` (one place for the EPIPE rule);
// - a closed stdout ends a command: `out` throws StdoutClosed, which the runner (cli/run.ts)
//   turns into a quiet exit 0 (`a2a status | head`, `a2a tail -f x | head -1`); `outStrict`,
//   for output whose reading is durable (mail marked read, a topic cursor moved), throws an
//   EIO A2AError instead (exit 1, "what was not shown stays unread").

import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { A2AError, ioError } from "../lib/core/errors";
import { platformFor } from "../lib/core/platform";
import { parseDuration } from "../lib/core/time";
import { encodeUtf8 } from "../lib/core/utf8";

// The reader of stdout went away (EPIPE) before a non-durable output was all written: the
// command stops where it is and exits 0, as `head` expects of any Unix filter.
export class StdoutClosed extends Error {
  constructor() {
    super("stdout closed by its reader");
    this.name = "StdoutClosed";
  }
}

// How a write treats a reader that left: "strict", a failure (a message must not count as
// read unless it was written out in full); "stop", the reader's choice (the command ends,
// exit 0); "ignore", nothing to do (stderr).
type OnClosed = "strict" | "stop" | "ignore";

function writeAll(fd: number, text: string | Uint8Array, onClosed: OnClosed): void {
  const buf = typeof text === "string" ? encodeUtf8(text) : text;
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue; // a non-blocking pipe is full: the reader will drain it
      if (code !== "EPIPE") {
        if (fd === 2) return; // nowhere left to say it
        throw outputError(code, onClosed === "strict");
      }
      if (onClosed === "ignore") return;
      if (onClosed === "stop") throw new StdoutClosed();
      throw new A2AError("EIO", "stdout closed before everything was written: what was not shown stays unread; run the command again");
    }
  }
}

// A failed write to stdout is about the output (`a2a status > /dev/full`), never the store:
// say so, so nobody goes freeing space on the store's disk.
function outputError(code: string | undefined, durable: boolean): A2AError {
  const what = code === "ENOSPC" ? "the output's device is full (the store is fine)" : code === "EDQUOT" ? "the output's disk quota is exhausted (the store is fine)" : "the output could not be written (the store is fine)";
  const rest = durable ? "what was not shown stays unread; free space there or redirect elsewhere, then run the command again" : "free space there or redirect the output elsewhere";
  return new A2AError("EIO", `writing to stdout failed (${code ?? "error"}): ${what}; ${rest}`, { data: { errno: code, stream: "stdout" } });
}

export const out = (text: string | Uint8Array) => writeAll(1, text, "stop");
export const outStrict = (text: string) => writeAll(1, text, "strict");
export const err = (text: string) => writeAll(2, text, "ignore");

// Closes stdout so `$(a2a wait x)` sees EOF now, not after the watch teardown and exit.
export function closeStdout(): void {
  try {
    closeSync(1);
  } catch {
    // already closed
  }
}

// Terminal facts, for output meant for a person only (live status lines, table width).
// Loading node:tty costs ~3 ms of start-up, so it is asked only about a character device that
// may be a terminal: never about a pipe or a file, nor (on Linux) about /dev/null and the other
// memory devices (major 1), which is where scripts and benchmarks point a command's streams.
export function isTTY(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return false;
    if (platformFor().isMemoryDevice(st)) return false;
    return (require("node:tty") as typeof import("node:tty")).isatty(fd);
  } catch {
    return false;
  }
}

// The width output on `fd` should fit: $COLUMNS, else the terminal's, else undefined (a pipe
// or a file: no limit). process.stdout/stderr are touched only on a terminal (start-up cost).
export function columns(fd: 1 | 2 = 1, env: Record<string, string | undefined> = process.env): number | undefined {
  const c = Number(env.COLUMNS);
  if (Number.isInteger(c) && c > 0) return c;
  if (!isTTY(fd)) return undefined;
  const w = (fd === 1 ? process.stdout : process.stderr).columns;
  return typeof w === "number" && w > 0 ? w : undefined;
}

export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    // ignoreBOM: a leading byte-order mark is data too; a2a passes text through byte for byte.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new A2AError("EUSAGE", `${what} is not valid UTF-8: a2a carries text; base64-encode binary data first`);
  }
}

const overLimit = (what: string, where: string, limit: number, size?: number) =>
  new A2AError(
    "ETOOBIG",
    `${what} ${where} is ${size === undefined ? "over" : `${size} bytes, over`} the ${limit}-byte limit: send a path or a summary instead, or raise A2A_MAX_BYTES`,
  );

// Reads `fd` to its end, but never more than `limit` + 1 bytes: /dev/zero or an endless pipe
// costs one buffer of the limit, then a clear error.
function readLimited(fd: number, limit: number, what: string, where: string): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  readChunks(fd, where, (chunk) => {
    total += chunk.length;
    if (total > limit) throw overLimit(what, where, limit);
    chunks.push(Buffer.from(chunk));
  });
  return Buffer.concat(chunks);
}

// Every chunk read from `fd` until its end, to `sink` (a chunk is reused: copy what is kept).
export function readChunks(fd: number, where: string, sink: (chunk: Buffer) => void): void {
  const buf = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Bun.sleepSync(1); // a non-blocking stdin with nothing yet: its writer is still writing
        continue;
      }
      if (code === "EOF") break;
      throw ioError(e, `reading ${where}`);
    }
    if (n === 0) break;
    sink(buf.subarray(0, n));
  }
}

// Reads all of stdin, stopping early (with ETOOBIG) once it is over `limit` bytes.
export function readStdin(limit: number, what: string): string {
  return decodeUtf8(readLimited(0, limit, what, "on stdin"), what);
}

// Reads the file the user named (a link or a pipe such as <(cmd) is theirs to give): a
// regular file's size is checked before a byte is read, anything else is read up to the limit.
export function readFileText(path: string, limit: number, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new A2AError("EUSAGE", `cannot read ${path}: no such file; check the --file path`);
    throw ioError(e, `reading ${path}`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new A2AError("EUSAGE", `${path} is a directory: give --file a file`);
    if (st.isFile() && st.size > limit) throw overLimit(what, `in ${path}`, limit, st.size);
    return decodeUtf8(readLimited(fd, limit, what, `in ${path}`), `${what} in ${path}`);
  } finally {
    closeSync(fd);
  }
}

// Stdin is input when it is a pipe, socket or file (`cmd | a2a publish r`, `< f`), not a
// terminal or /dev/null (a script's default): a forgotten RESULT must be a usage error, not
// an empty publish that wakes every waiter with nothing.
function stdinHasData(): boolean {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isSocket() || st.isFile();
  } catch {
    return false;
  }
}

// The payload of publish/append/send: the argument, `-` or a piped stdin, or --file.
export function payload(arg: string | undefined, file: string | undefined, limit: number, what: string): string {
  if (file !== undefined) {
    if (arg !== undefined) throw new A2AError("EUSAGE", `both a ${what} argument and --file given: use one`);
    return readFileText(file, limit, what);
  }
  if (arg === "-" || (arg === undefined && stdinHasData())) return readStdin(limit, what);
  if (arg === undefined) throw new A2AError("EUSAGE", `${what} is missing: pass it as an argument, '-' to read stdin, or --file PATH`);
  return strictArg(arg, what);
}

// Bun decodes argv leniently: invalid UTF-8 arrives as U+FFFD and would be published changed,
// silently. The raw bytes are the platform's to give (/proc/self/cmdline on Linux): an argument that decodes to this
// text but is not valid UTF-8 is refused like invalid stdin. Elsewhere, or if no argument
// matches, the text is taken as it came.
function strictArg(arg: string, what: string): string {
  if (!arg.includes("\uFFFD")) return arg;
  const raw = platformFor().rawArgv();
  if (!raw) return arg;
  let start = 0;
  for (let i = 0; i <= raw.length; i++) {
    if (i < raw.length && raw[i] !== 0) continue;
    const bytes = raw.subarray(start, i);
    start = i + 1;
    if (bytes.toString("utf8") === arg) decodeUtf8(bytes, `${what} argument`);
  }
  return arg;
}

// A duration flag's value in the unit lib/ takes; undefined when the flag was not given.
export const durationSec = (text: string | undefined, flag: string) => (text === undefined ? undefined : parseDuration(text, flag));
export const durationMs = (text: string | undefined, flag: string) => (text === undefined ? undefined : parseDuration(text, flag) * 1000);
// Milliseconds from now until unix second `at` (a time lib/ decided), for a timer.
export const msUntil = (at: number) => Math.max(0, at * 1000 - Date.now());

export function parseCount(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(String(text)) || !Number.isSafeInteger(n)) {
    throw new A2AError("EUSAGE", `${flag} ${JSON.stringify(text)} is not a whole number: use 0 or more, e.g. ${flag} 3`);
  }
  return n;
}

export function json(value: unknown): string {
  return JSON.stringify(value) + "\n";
}

// Stdin as it arrives, cut into lines (each with its "\n"; the last may lack one), for
// `append --lines`. A line over `limit` bytes is cut into pieces of at most `limit`, on UTF-8
// character boundaries. Invalid UTF-8 is a usage error naming the line.
export async function* stdinLines(limit: number, what: string): AsyncGenerator<string> {
  let pending = Buffer.alloc(0);
  let line = 1;
  for await (const data of Bun.stdin.stream()) {
    pending = pending.length ? Buffer.concat([pending, Buffer.from(data)]) : Buffer.from(data);
    for (;;) {
      const nl = pending.indexOf(10);
      const whole = nl >= 0 && nl < limit;
      if (!whole && pending.length <= limit) break;
      const end = whole ? nl + 1 : utf8Cut(pending, limit);
      yield decodeUtf8(pending.subarray(0, end), `${what} (line ${line})`);
      if (whole) line++;
      pending = pending.subarray(end);
    }
  }
  if (pending.length) yield decodeUtf8(pending, `${what} (line ${line})`);
}

// The largest length <= limit that does not split a UTF-8 character of `b`.
function utf8Cut(b: Buffer, limit: number): number {
  let end = Math.min(limit, b.length);
  while (end > 0 && end < b.length && (b[end] & 0xc0) === 0x80) end--;
  return end || Math.min(limit, b.length);
}
