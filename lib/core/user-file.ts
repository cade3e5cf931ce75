// Writing a user's own file OUTSIDE any store, for the commands that are asked to (`a2a setup`
// editing an agent's settings, `a2a export -o FILE`, `a2a get -o FILE`, `a2a guard install`):
// lib/fs/atomic.ts's primitive for files that are not the store's: a temp file beside FILE
// (lib/core/user-temp.ts), written in full, fsynced, renamed over FILE. With atomic.ts, the only
// module that writes file content (tests/unit/architecture.test.ts).

import { closeSync, fsyncSync, linkSync, openSync, realpathSync, renameSync, statSync, writeSync } from "node:fs";
import { ioError } from "./errors";
import { unlinkQuiet } from "./unlink";
import { userTemp } from "./user-temp";

// Replaces a file OUTSIDE any store, for the commands that are asked to (`a2a setup claude`,
// editing Claude Code's settings; `a2a export -o FILE`): the temp file is a dot-name beside
// `dest` (same directory, so the rename is atomic), written in full and fsynced; the mode of the
// file it replaces is kept (0600 for a new one). `exclusive`: create only, EEXIST if it exists (a
// backup never overwrites another). Throws A2AError(EIO) with `dest` untouched.
export function writeUserFile(target: string, data: string, opts: { exclusive?: boolean } = {}): void {
  const f = openUserFile(target);
  try {
    f.write(data);
    f.commit(opts);
  } finally {
    f.abandon();
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

// The same, written piece by piece (`write` as often as needed, then `commit`): until the commit
// nothing stands at `dest` but what stood there before; `abandon` (after a failure, or always:
// it does nothing once committed) removes the temp file. A `dest` that is a device or a FIFO
// (-o /dev/stdout) is written in place: renaming a file over it would replace the device.
export function openUserFile(target: string): { write(data: string | Uint8Array): void; commit(opts?: { exclusive?: boolean }): void; abandon(): void } {
  let dest = target;
  try {
    dest = realpathSync(target); // a settings file kept as a link (dotfiles) stays a link
  } catch {
    // a new file
  }
  let mode = 0o600;
  let special = false; // a device or a FIFO (-o /dev/stdout): written in place, never renamed over
  try {
    const st = statSync(dest);
    mode = st.mode & 0o777;
    special = !st.isFile() && !st.isDirectory();
  } catch {
    // a new file
  }
  const temp = userTemp(dest); // and a killed run's leftovers of dest go
  let fd: number | undefined;
  let made = false;
  const io = <T>(step: () => T): T => {
    try {
      return step();
    } catch (err) {
      throw ioError(err, `writing ${dest}`);
    }
  };
  io(() => {
    fd = special ? openSync(dest, "w") : openSync(temp, "wx", mode);
    made = !special;
  });
  if (special) {
    return {
      write: (data) => io(() => writeAll(fd!, data)),
      commit: (opts = {}) =>
        io(() => {
          if (opts.exclusive) throw Object.assign(new Error(`${dest} exists`), { code: "EEXIST" });
          closeSync(fd!);
          fd = undefined;
        }),
      abandon: () => {
        if (fd !== undefined) closeSync(fd);
        fd = undefined;
      },
    };
  }
  return {
    write: (data) => io(() => writeAll(fd!, data)),
    commit: (opts = {}) =>
      io(() => {
        fsyncSync(fd!);
        closeSync(fd!);
        fd = undefined;
        if (opts.exclusive) linkSync(temp, dest);
        else renameSync(temp, dest);
        if (!opts.exclusive) made = false;
      }),
    abandon: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      if (made) unlinkQuiet(temp);
      made = false;
    },
  };
}
