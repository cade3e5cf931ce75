// Terminal I/O for the CLI: output through fs.writeSync (Bun's first process.stdout.write
// costs ~9 ms of start-up), stdin reading with strict UTF-8, and the parsers for the values
// users type (durations, versions). Nothing here knows about slots.

import { closeSync, fstatSync, readFileSync, readSync, writeSync } from "node:fs";
import { A2AError, ioError } from "../lib/core/errors";

// `strict`: a reader that left is a failure (a message must not count as read unless it was
// written out in full); otherwise it is the reader's choice (`a2a status | head`).
function writeAll(fd: number, text: string | Uint8Array, strict = false): void {
  const buf = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue; // a non-blocking pipe is full: the reader will drain it
      if (!strict && code === "EPIPE") return;
      if (strict) throw new A2AError("EIO", "stdout closed before everything was written: what was not shown stays unread; run the command again");
      throw err;
    }
  }
}

export const out = (text: string | Uint8Array) => writeAll(1, text);
export const outStrict = (text: string) => writeAll(1, text, true);
export const err = (text: string) => writeAll(2, text);

// Closes stdout so `$(a2a wait x)` sees EOF now, not after the watch teardown and exit.
export function closeStdout(): void {
  try {
    closeSync(1);
  } catch {
    // already closed
  }
}

export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new A2AError("EUSAGE", `${what} is not valid UTF-8: a2a carries text; base64-encode binary data first`);
  }
}

// Reads all of stdin, stopping early (with ETOOBIG) once it is over `limit` bytes.
export function readStdin(limit: number, what: string): string {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Bun.sleepSync(1);
        continue;
      }
      if (code === "EOF") break;
      throw ioError(e, "reading stdin");
    }
    if (n === 0) break;
    total += n;
    if (total > limit) {
      throw new A2AError("ETOOBIG", `${what} on stdin is over the ${limit}-byte limit: send a path or a summary instead, or raise A2A_MAX_BYTES`);
    }
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return decodeUtf8(Buffer.concat(chunks), what);
}

export function readFileText(path: string, limit: number, what: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new A2AError("EUSAGE", `cannot read ${path}: no such file; check the --file path`);
    throw ioError(e, `reading ${path}`);
  }
  if (bytes.length > limit) {
    throw new A2AError("ETOOBIG", `${what} in ${path} is ${bytes.length} bytes, over the ${limit}-byte limit: send a path or a summary instead, or raise A2A_MAX_BYTES`);
  }
  return decodeUtf8(bytes, `${what} in ${path}`);
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
// silently. The raw bytes are in /proc/self/cmdline (Linux): an argument that decodes to this
// text but is not valid UTF-8 is refused like invalid stdin. Elsewhere, or if no argument
// matches, the text is taken as it came.
function strictArg(arg: string, what: string): string {
  if (!arg.includes("\uFFFD")) return arg;
  let raw: Buffer;
  try {
    raw = readFileSync("/proc/self/cmdline");
  } catch {
    return arg;
  }
  let start = 0;
  for (let i = 0; i <= raw.length; i++) {
    if (i < raw.length && raw[i] !== 0) continue;
    const bytes = raw.subarray(start, i);
    start = i + 1;
    if (bytes.toString("utf8") === arg) decodeUtf8(bytes, `${what} argument`);
  }
  return arg;
}

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

// "90", "90s", "1.5m", "2h", "7d", "250ms" -> seconds.
export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(String(text).trim());
  if (!m) throw new A2AError("EUSAGE", `${flag} ${JSON.stringify(text)} is not a duration: use seconds or a number with ms, s, m, h or d (e.g. 30, 90s, 5m, 2h)`);
  return Number(m[1]) * UNITS[m[2] ?? "s"];
}

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
