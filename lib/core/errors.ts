// The one error type of a2a. Every failure a user can cause or meet is an A2AError with a
// code (which fixes the exit status and the MCP error name), data (the facts, for programs),
// and a text "<what happened>: <what to do>" whose remedy may name things the caller can do:
// an argument (`arg("ifVersion", 2)`) or an operation (`op("status", name)`). lib/ does not
// know how a shell user or a model spells those; each adapter renders them with its own
// phrasebook (`phrase`): the CLI says `--if-version 2`, the MCP server says `if_version: 2`.
//
// Invariant: lib/ throws only A2AError for anything it anticipates; anything else is a bug or
// an unexpected I/O failure, which adapters report through `asA2AError` as exit 1.

export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  TIMEOUT: 124,
} as const;

export type ErrorCode =
  | "EUSAGE" // bad flag, bad name, bad value
  | "ETOOBIG" // payload over the size limit
  | "ENOTFOUND" // no such slot / message / peer / task
  | "ECONFLICT" // compare-and-set lost, or a claim is already held
  | "ETIMEDOUT" // wait ran out of time
  | "EDENIED" // refused by a recipient's policy
  | "EFULL" // recipient's inbox is full
  | "EFAILED" // what was awaited ended in failure (a task is dead)
  | "EIO"; // filesystem trouble: permissions, disk full, corrupt store

const EXIT_OF: Record<ErrorCode, number> = {
  EUSAGE: EXIT.USAGE,
  ETOOBIG: EXIT.USAGE,
  ENOTFOUND: EXIT.NOT_FOUND,
  ECONFLICT: EXIT.CONFLICT,
  ETIMEDOUT: EXIT.TIMEOUT,
  EDENIED: EXIT.FAILURE,
  EFULL: EXIT.FAILURE,
  EFAILED: EXIT.FAILURE,
  EIO: EXIT.FAILURE,
};

// Something the caller can do, named neutrally; an adapter's phrasebook spells it.
export type Ref =
  | { arg: string; value?: string | number } // an argument of the current operation, camelCase
  | { op: string; args: (string | Ref)[] }; // another operation (CLI subcommand / MCP tool)

export type Part = string | Ref;

export interface Phrasebook {
  arg(name: string, value?: string | number): string;
  op(name: string, args: (string | Ref)[]): string; // renders its args itself (with `render`)
}

export const arg = (name: string, value?: string | number): Ref => ({ arg: name, value });
export const op = (name: string, ...args: (string | Ref)[]): Ref => ({ op: name, args });

// A text with refs in it: text`retry with ${arg("ifVersion", 2)}`.
export function text(strings: TemplateStringsArray, ...values: (string | number | Ref)[]): Part[] {
  const parts: Part[] = [];
  strings.forEach((s, i) => {
    if (s) parts.push(s);
    if (i < values.length) parts.push(typeof values[i] === "object" ? (values[i] as Ref) : String(values[i]));
  });
  return parts;
}

export function render(parts: Part[], book: Phrasebook): string {
  return parts
    .map((p) => {
      if (typeof p === "string") return p;
      if ("arg" in p) return book.arg(p.arg, p.value);
      return book.op(p.op, p.args);
    })
    .join("");
}

// How lib/ itself spells refs (logs, tests of lib): neutral, never shown by an adapter.
const NEUTRAL: Phrasebook = {
  arg: (name, value) => (value === undefined ? name : `${name} ${value}`),
  op: (name, args) => [name, ...args.map((a) => render([a], NEUTRAL))].join(" "),
};

export class A2AError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly parts: Part[];
  readonly data: Record<string, unknown>;
  constructor(code: ErrorCode, message: string | Part[], options?: { cause?: unknown; data?: Record<string, unknown> }) {
    const parts = typeof message === "string" ? [message] : message;
    super(render(parts, NEUTRAL), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "A2AError";
    this.code = code;
    this.exitCode = EXIT_OF[code];
    this.parts = parts;
    this.data = options?.data ?? {};
  }
}

// The error's text for one audience.
export const phrase = (e: A2AError, book: Phrasebook): string => render(e.parts, book);

// `err` worded for the operation that met it, when it says a change may or may not have been
// made (data.outcome "unknown", data.lost the words for how: a database connection lost while
// the commit was on its way): `what` may have happened, and how the caller finds out (`find`).
// Any other error is returned as it is.
export function unknownOutcome(err: unknown, what: string, find: Part[]): unknown {
  if (!(err instanceof A2AError) || err.data.outcome !== "unknown") return err;
  return new A2AError(err.code, [`${String(err.data.lost)}: ${what}: `, ...find], { cause: err.cause, data: err.data });
}

// Turns a raw Node/Bun filesystem error into a message a user can act on.
export function ioError(err: unknown, what: string | Part[]): A2AError {
  if (err instanceof A2AError) return err;
  const e = err as NodeJS.ErrnoException;
  const hint: Record<string, Part[]> = {
    EACCES: ["check the permissions of the store directory (yours, mode 0700; or shared with a group you are in, root mode 3770)"],
    EPERM: ["check the permissions of the store directory (yours, mode 0700; or shared with a group you are in, root mode 3770)"],
    EROFS: text`the store is on a read-only filesystem; point ${arg("dir")} or A2A_DIR at a writable directory`,
    ENOSPC: ["the disk is full; free space, then retry (nothing was changed)"],
    EDQUOT: ["the disk quota is exhausted; free space, then retry (nothing was changed)"],
    ENOTDIR: text`a path inside the store is not a directory; point ${arg("dir")} at an a2a store or an empty directory`,
    EMFILE: ["too many open files; raise `ulimit -n` or wait on fewer names"],
  };
  const fix = (e && e.code && hint[e.code]) || ["check the store directory and retry"];
  const detail = e && e.code ? `${e.code}` : String((e && e.message) || err);
  return new A2AError("EIO", [...(typeof what === "string" ? [what] : what), ` failed (${detail}): `, ...fix], { cause: err, data: { errno: e?.code } });
}

// Anything thrown, as an A2AError (unexpected errors keep their message, exit 1).
export function asA2AError(err: unknown): A2AError {
  if (err instanceof A2AError) return err;
  if (err && typeof err === "object" && "code" in err && typeof (err as any).code === "string" && /^E[A-Z]+$/.test((err as any).code)) {
    return ioError(err, "filesystem operation");
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new A2AError("EIO", `unexpected failure (${msg.split("\n")[0]}): please report this with the command you ran`, { cause: err });
}

// A record an engine cannot read as one a2a wrote (foreign bytes, a FIFO, a link where a version
// should be), where it is and what it is. An engine refuses such a record with an EIO carrying
// `damaged: true`, so that a caller going over many records passes over the one that is damaged.
export interface Damage {
  file: string;
  why: string; // "not JSON", "not a regular file", ...
}

// The damage `err` reports, or undefined for any other error.
export function damageOf(err: unknown): Damage | undefined {
  if (!(err instanceof A2AError) || err.data.damaged !== true) return undefined;
  return { file: String(err.data.file), why: String(err.data.why) };
}

// What a file-engine operation says on a PostgreSQL store until the engine has its own (issue 22).
export function notOnDatabase(what: string): A2AError {
  return new A2AError("EUSAGE", `${what} does not work on a PostgreSQL store yet: run it on a directory store, or leave it out`);
}
