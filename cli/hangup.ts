// A blocking command whose stdout has no reader any more (`ssh HOST a2a wait x` and the ssh
// connection gone, `a2a watch | grep -m1 x` and grep done) would otherwise block until it next
// writes, which for a wait may be never: the remote `a2a wait` of a Ctrl-C'd ssh ran on until
// the slot was published. While a command blocks, its stdout is looked at a few times a second
// with poll(2), asking for no event, so nothing is read or written: a pipe whose read end is
// closed reports POLLERR, a socket whose peer is gone POLLHUP.
//
// Only stdout counts. stdin at its end says nothing about the caller: `ssh -n HOST a2a wait x`,
// a script run with stdin closed, or the pipe of a `while read` loop all end stdin while the
// caller still waits for the answer.

import { fstatSync } from "node:fs";

const POLLERR = 0x8;
const POLLHUP = 0x10;
const EVERY_MS = 200;

function loadPoll(): ((fds: Uint8Array) => number) | undefined {
  const lib = process.platform === "linux" ? "libc.so.6" : process.platform === "darwin" ? "libc.dylib" : undefined;
  if (!lib) return undefined;
  try {
    // Required, not imported: only a blocking command pays for bun:ffi.
    const { dlopen, FFIType, ptr } = require("bun:ffi") as typeof import("bun:ffi");
    const { poll } = dlopen(lib, { poll: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 } }).symbols;
    return (fds) => poll(ptr(fds), 1, 0);
  } catch {
    return undefined;
  }
}

// Calls `gone` once stdout (a pipe or a socket) has no reader; the returned function stops
// looking (before stdout is closed: fd 1 may then be reused for anything).
export function watchStdoutHangup(gone: () => void): () => void {
  let st;
  try {
    st = fstatSync(1);
  } catch {
    return () => {};
  }
  if (!st.isFIFO() && !st.isSocket()) return () => {}; // a terminal, a file, /dev/null: nobody to lose
  const poll = loadPoll();
  if (!poll) return () => {};
  // struct pollfd { int fd; short events; short revents; }, in the machine's byte order. A
  // Uint8Array, not a Buffer: a wait on a database can arm this, and Buffer's first touch costs
  // a start-up as much again (lib/core/utf8.ts).
  const fds = new Uint8Array(8);
  const view = new DataView(fds.buffer);
  const le = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  view.setInt32(0, 1, le);
  const timer = setInterval(() => {
    view.setInt16(6, 0, le);
    if (poll(fds) > 0 && view.getInt16(6, le) & (POLLERR | POLLHUP)) {
      clearInterval(timer);
      gone();
    }
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
