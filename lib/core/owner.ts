// Who holds something (a message claim, a presence, an idempotency key, a task) and whether that
// holder can still be alive. A holder is a host plus a pid. On this host the answer is exact
// (kill(pid, 0)); for another host only time can tell, so a holder older than its lease is
// taken for dead. A pid can be reused, so even a local holder that looks alive counts as gone
// once it is LOCAL_LEASE_FACTOR leases old. Also: the OS user behind a uid, the gid of a group.

import { readFileSync } from "node:fs";
import type { Store } from "./config";

export const LOCAL_LEASE_FACTOR = 10;

// The host as it appears inside file names: anything but letters, digits, '.', '-' becomes '_'.
export function hostTag(host: string): string {
  return host.replace(/[^A-Za-z0-9.-]/g, "_") || "_";
}

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by someone else
  }
}

// True when a holder (host, pid) that took hold `ageMs` ago can no longer be acting on it.
export function holderGone(store: Store, host: string, pid: number, ageMs: number, leaseMs: number): boolean {
  if (hostTag(host) === hostTag(store.host)) return !pidAlive(pid) || ageMs > leaseMs * LOCAL_LEASE_FACTOR;
  return ageMs > leaseMs;
}

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
