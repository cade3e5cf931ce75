// The live status line of a long wait (wait, recv --wait, tail --follow, and any blocking
// command to come): one line on stderr, redrawn in place every second, saying what is
// awaited, its state and task, and the time elapsed; erased when the wait ends.
//
// Invariants: only when stderr is a terminal (and TERM is not "dumb"): a pipe, a file or a
// script's captured stderr gets nothing extra, ever. The line never wraps (cut to the
// terminal's width) and uses no colour, only "\r" and erase-to-end-of-line. stdout is never
// touched, so `x=$(a2a wait r)` captures exactly the result even on a terminal.

import { columns, err, isTTY } from "./io";

export interface LiveLine {
  // Erases the line (before output goes to the same terminal); the next tick redraws it.
  clear(): void;
  // Says `text` was just written to stdout: when stdout is the same terminal, the line is
  // redrawn only once the output ends a line (never over a partial line of output).
  wrote(text: string): void;
  // Erases the line for good.
  stop(): void;
}

const NONE: LiveLine = { clear() {}, wrote() {}, stop() {} };

export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
}

// Starts the line: `describe()` says what is awaited and its state ("waiting for build
// (running: make all)", read from the store: asynchronous); the elapsed time is added here.
// Drawn before it resolves (so it comes before the command's first output), then every `everyMs`.
export async function liveLine(describe: () => string | Promise<string>, everyMs = 1000, env: Record<string, string | undefined> = process.env): Promise<LiveLine> {
  if (!isTTY(2) || env.TERM === "dumb") return NONE;
  const t0 = Date.now();
  let shown = false;
  let canDraw = true;
  let stopped = false;
  const sharesTerminal = isTTY(1);
  const draw = (what: string) => {
    if (!canDraw || stopped) return;
    const line = `${what}, ${elapsed(Date.now() - t0)}`;
    const width = columns(2, {}) ?? 80;
    const flat = line.replace(/[\u0000-\u001f\u007f]+/g, " ");
    err(`\r\x1b[K${flat.length >= width ? flat.slice(0, Math.max(1, width - 2)) + "…" : flat}`);
    shown = true;
  };
  const clear = () => {
    if (shown) err("\r\x1b[K");
    shown = false;
  };
  // A state that cannot be read now is shown at the next tick.
  const tick = async () => {
    try {
      draw(await describe());
    } catch {}
  };
  await tick();
  const timer = setInterval(tick, everyMs);
  timer.unref?.();
  return {
    clear,
    wrote(text: string) {
      if (sharesTerminal && text) canDraw = text.endsWith("\n");
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      clear();
    },
  };
}
