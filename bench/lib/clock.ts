// One clock for every process of the bench: CLOCK_MONOTONIC through bun:ffi, in milliseconds
// (a float with ns resolution). Bun's process.hrtime and Bun.nanoseconds count from the start
// of *this* process, so they cannot be compared across processes; CLOCK_MONOTONIC can, and it
// is what bench/inotify_wait.c reads too. One call costs well under a microsecond.

import { dlopen, FFIType, ptr } from "bun:ffi";

const CLOCK_MONOTONIC = 1;

function openLibc() {
  const symbols = { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } } as const;
  const errors: string[] = [];
  for (const name of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libSystem.B.dylib"]) {
    try {
      return dlopen(name, symbols);
    } catch (e) {
      errors.push(`${name}: ${(e as Error).message}`);
    }
  }
  throw new Error(`bench/lib/clock.ts: cannot load clock_gettime from libc (${errors.join("; ")})`);
}

const libc = openLibc();
const ts = new BigInt64Array(2); // struct timespec { tv_sec; tv_nsec } on 64-bit
const tsPtr = ptr(ts);

// CLOCK_MONOTONIC now, in ms. Comparable across processes on one machine.
export function mono(): number {
  if (libc.symbols.clock_gettime(CLOCK_MONOTONIC, tsPtr) !== 0) throw new Error("clock_gettime failed");
  return Number(ts[0]) * 1e3 + Number(ts[1]) / 1e6;
}
