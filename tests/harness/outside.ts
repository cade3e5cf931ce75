// Tests leave nothing outside what they made (issue 33): the places a test's children were
// found writing to (chromium's crash database and dconf cache, opencode's data, state, cache,
// config and temp directories) that were absent when the run started are still absent at its
// end, and no temporary directory a test let go of (tempDir()'s dispose) is back, refilled by
// something still running (a release build into a directory already removed).
// tests/preload.ts checks both once, after the last file, and fails the run naming what
// changed. Only absent paths are watched: one that exists may be changing under the developer's
// own browser or opencode session (an agent running the suite may be one), so its changes say
// nothing about the tests; a fresh HOME, as CI's, watches them all.
import { existsSync, lstatSync } from "node:fs";
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

// Directories tempDir() handed out and then removed: none may exist again at the end.
const disposed = new Set<string>();

export function noteDisposed(path: string): void {
  disposed.add(path);
}

export function refilled(): string[] {
  return [...disposed].filter((p) => existsSync(p));
}
