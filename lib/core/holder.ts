// Who holds something (a message claim, a presence, an idempotency key, a task) and whether that
// holder can still be alive. A holder is a host plus a pid. On this host the answer is exact
// (kill(pid, 0)); for another host only time can tell, so a holder older than its lease is
// taken for dead. A pid can be reused, so even a local holder that looks alive counts as gone
// once it is LOCAL_LEASE_FACTOR leases old.

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
