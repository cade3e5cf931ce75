// Tests leave nothing outside what they made (issue 33): the places a test's children were
// found writing to (chromium's crash database and dconf cache, opencode's data, state, cache,
// config and temp directories) that were absent when the run started are still absent at its
// end, and no temporary directory a test let go of (tempDir()'s dispose) is back, refilled by
// something still running (a release build into a directory already removed).
// tests/preload.ts checks both once, after the last file, and fails the run naming what
// changed. Only absent paths are watched: one that exists may be changing under the developer's
// own browser or opencode session (an agent running the suite may be one), so its changes say
// nothing about the tests; a fresh HOME, as CI's, watches them all.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export function watchedPaths(home = homedir(), tmp = tmpdir()): string[] {
  return [
    join(home, ".config", "chromium"),
    join(home, ".cache", "chromium"),
    join(home, ".cache", "dconf"),
    join(home, ".pki"),
    join(home, ".config", "opencode"),
    join(home, ".local", "share", "opencode"),
    join(home, ".local", "state", "opencode"),
    join(home, ".cache", "opencode"),
    join(tmp, "opencode"),
  ];
}

function lstatIf(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

export const absent = (paths: string[]): string[] => paths.filter((p) => !lstatIf(p));

export const appeared = (wereAbsent: string[]): string[] => wereAbsent.filter((p) => lstatIf(p));

// Directories tempDir() handed out and then removed: none may exist again at the end. Each is
// kept with the test file that let it go (from the stack), and what is in it when it comes back,
// so the failure names whose process went on writing.
const disposed = new Map<string, string>();

export function noteDisposed(path: string): void {
  const by = new Error().stack?.split("\n").map((l) => l.match(/tests\/(?:e2e|unit|contract)\/[\w.-]+\.test\.ts:\d+/)?.[0]).find(Boolean);
  disposed.set(path, by ?? "an unknown test");
}

// Each refilled directory, with its test file and what is in it now.
export function refilled(): { path: string; note: string }[] {
  return [...disposed].filter(([p]) => existsSync(p)).map(([p, by]) => {
    let inside = "";
    try {
      inside = (readdirSync(p, { recursive: true }) as string[]).slice(0, 8).join(", ");
    } catch {
      // gone again, or not a directory
    }
    return { path: p, note: `${p} (let go by ${by}; now holding: ${inside || "nothing"})` };
  });
}
