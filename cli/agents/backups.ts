// Where `a2a setup` keeps what it needs to give a user's files back, outside the user's
// repository: $XDG_STATE_HOME/a2a/setup (~/.local/state/a2a/setup) holds, per file it changed
// (a directory named by the file's absolute path), the last few versions it replaced
// (backup-TIME) and, for a file setup created, a `created` mark naming the topmost directory
// that creation made, so --remove can take the file (and those directories, if left empty) out
// again with its last a2a entry.
//
// Invariants:
// - nothing is written beside the user's files but the files themselves;
// - at most KEEP backups per file: the oldest go first;
// - a file without a `created` mark is never deleted for being empty: it was the user's.

import { mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { writeUserFile } from "../../lib/core/user-file";
import { A2AError } from "../../lib/core/errors";
import { isoTime, nowSec } from "../../lib/core/time";

const KEEP = 5;

export function stateDir(home: string): string {
  return join(process.env.XDG_STATE_HOME || join(home, ".local", "state"), "a2a", "setup");
}

// The directory of one file's backups and mark.
const fileDir = (home: string, path: string) => join(stateDir(home), resolve(path).split(sep).filter(Boolean).join(sep));

function mkdirs(dir: string): string | undefined {
  try {
    return mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new A2AError("EIO", `cannot create ${dir}: ${(e as Error).message}`);
  }
}

// 20261201T222800Z: a backup's suffix, sortable.
const stamp = () => isoTime(nowSec()).replace(/[-:]/g, "");

// Keeps `text` as the newest backup of `path` (the older ones beyond KEEP go); returns its path.
export function backUp(home: string, path: string, text: string): string {
  const dir = fileDir(home, path);
  mkdirs(dir);
  let backup = "";
  for (let n = 1; ; n++) {
    backup = join(dir, `backup-${stamp()}${n > 1 ? `-${String(n).padStart(2, "0")}` : ""}`);
    try {
      writeUserFile(backup, text, { exclusive: true });
      break;
    } catch (e) {
      if (n >= 99 || (e as A2AError).data?.errno !== "EEXIST") throw e;
    }
  }
  const old = readdirSync(dir).filter((f) => f.startsWith("backup-")).sort();
  for (const f of old.slice(0, Math.max(0, old.length - KEEP))) unlinkSync(join(dir, f));
  return backup;
}

// Directories made in this run, so a second new file in a directory the first one's creation
// made is marked with it too (codex's .codex/hooks.json, then .codex/config.toml).
const madeThisRun = new Set<string>();

// Makes the directory of a new file `path` and marks the file as setup's, with the topmost
// directory setup made for it (this run).
export function createFor(home: string, path: string): void {
  const parent = dirname(resolve(path));
  const first = mkdirs(parent);
  if (first) for (let d = parent; ; d = dirname(d)) {
    madeThisRun.add(d);
    if (d === first || d === dirname(d)) break;
  }
  let top = "";
  for (let d = parent; madeThisRun.has(d); d = dirname(d)) top = d;
  const dir = fileDir(home, path);
  mkdirs(dir);
  writeUserFile(join(dir, "created"), top + "\n");
}

// Whether setup created `path` (and it has not been taken out since).
export function created(home: string, path: string): boolean {
  try {
    readFileSync(join(fileDir(home, path), "created"));
    return true;
  } catch {
    return false;
  }
}

// After setup's file `path` was deleted: the directories its creation made, from its own up,
// each while empty; then the mark.
export function uncreate(home: string, path: string): void {
  const mark = join(fileDir(home, path), "created");
  let top = "";
  try {
    top = readFileSync(mark, "utf8").trim();
  } catch {
    return;
  }
  if (top) for (let d = dirname(resolve(path)); d === top || d.startsWith(top + sep); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      break; // not empty: someone else's files are there
    }
    if (d === top) break;
  }
  unlinkSync(mark);
}
