// The OS users and groups behind a file's owner: the file engine's writer is the OS user that
// owns a record's file (a shared store's trust, docs/FILE-ENGINE.md), named for people by
// /etc/passwd and /etc/group. Whether a holder (host, pid) is alive is engine-neutral:
// lib/core/holder.ts.

import { readFileSync } from "node:fs";
import type { Store } from "../core/config";

// The OS user name for `uid` (from /etc/passwd, read once per Store), else "uid N".
export function userName(store: Store, uid: number): string {
  if (!store.users) {
    const users = (store.users = new Map<number, string>());
    try {
      for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
        const f = line.split(":");
        if (f.length > 2 && /^\d+$/.test(f[2]) && !users.has(Number(f[2]))) users.set(Number(f[2]), f[0]);
      }
    } catch {
      // no passwd file (containers): numeric uids it is
    }
  }
  return store.users.get(uid) ?? `uid ${uid}`;
}

// The gid of group `name` (from /etc/group), or undefined; a number is taken as a gid.
export function groupId(name: string): number | undefined {
  if (/^\d+$/.test(name)) return Number(name);
  try {
    for (const line of readFileSync("/etc/group", "utf8").split("\n")) {
      const f = line.split(":");
      if (f[0] === name && /^\d+$/.test(f[2] ?? "")) return Number(f[2]);
    }
  } catch {
    // no group file: only numeric gids
  }
  return undefined;
}

// The name of group `gid` (from /etc/group), else the number.
export function groupName(gid: number): string {
  try {
    for (const line of readFileSync("/etc/group", "utf8").split("\n")) {
      const f = line.split(":");
      if (f[2] === String(gid) && f[0]) return f[0];
    }
  } catch {
    // no group file: the number
  }
  return String(gid);
}
