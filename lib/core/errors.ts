// The one error type of a2a. Every failure a user can cause or meet is an A2AError whose
// message reads "<what happened>: <what to do>", and whose code fixes the exit status, so
// the CLI and the MCP server report the same thing the same way.
//
// Invariant: lib/ throws only A2AError for anything it anticipates; anything else is a bug
// or an unexpected I/O failure, which adapters report through `asA2AError` as exit 1.

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
  | "ENOTFOUND" // no such slot / message / peer
  | "ECONFLICT" // compare-and-set lost, or a claim is already held
  | "ETIMEDOUT" // wait ran out of time
  | "EDENIED" // refused by a recipient's policy
  | "EFULL" // recipient's inbox is full
  | "EIO"; // filesystem trouble: permissions, disk full, corrupt store

const EXIT_OF: Record<ErrorCode, number> = {
  EUSAGE: EXIT.USAGE,
  ETOOBIG: EXIT.USAGE,
  ENOTFOUND: EXIT.NOT_FOUND,
  ECONFLICT: EXIT.CONFLICT,
  ETIMEDOUT: EXIT.TIMEOUT,
  EDENIED: EXIT.FAILURE,
  EFULL: EXIT.FAILURE,
  EIO: EXIT.FAILURE,
};

export class A2AError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "A2AError";
    this.code = code;
    this.exitCode = EXIT_OF[code];
  }
}

// Turns a raw Node/Bun filesystem error into a message a user can act on.
export function ioError(err: unknown, what: string): A2AError {
  if (err instanceof A2AError) return err;
  const e = err as NodeJS.ErrnoException;
  const hint: Record<string, string> = {
    EACCES: "check the permissions of the store directory (it should be yours, mode 0700)",
    EPERM: "check the permissions of the store directory (it should be yours, mode 0700)",
    EROFS: "the store is on a read-only filesystem; point --dir or A2A_DIR at a writable directory",
    ENOSPC: "the disk is full; free space, then retry (nothing was changed)",
    EDQUOT: "the disk quota is exhausted; free space, then retry (nothing was changed)",
    ENOTDIR: "a path inside the store is not a directory; point --dir at an a2a store or an empty directory",
    EMFILE: "too many open files; raise `ulimit -n` or wait on fewer names",
  };
  const fix = (e && e.code && hint[e.code]) || "check the store directory and retry";
  const detail = e && e.code ? `${e.code}` : String((e && e.message) || err);
  return new A2AError("EIO", `${what} failed (${detail}): ${fix}`, { cause: err });
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
