// Whether the holder of a claim, key or presence can still be acting (lib/core/holder.ts) and
// whether a peer counts as live (lib/presence/peers.ts). Stores here are only what these read:
// the host name.
import { describe, expect, test } from "bun:test";
import { holderGone, hostTag, LOCAL_LEASE_FACTOR, pidAlive } from "../../lib/core/holder";
import { DEFAULT_HEARTBEAT_MS } from "../../lib/core/config";
import { isLive, type Peer } from "../../lib/presence/peers";

type Store = Parameters<typeof holderGone>[0];
const storeOn = (host: string) => ({ host }) as unknown as Store;

// A pid that existed and has been reaped: nobody holds it right now (pids are reused only
// after the counter wraps, far beyond the few processes this test starts).
const deadPid = () => Bun.spawnSync(["true"]).pid;

describe("hostTag", () => {
  test("keeps letters, digits, '.' and '-'; every other character becomes '_'", () => {
    const cases: [string, string][] = [
      ["box-1.example.org", "box-1.example.org"],
      ["my host", "my_host"],
      ["a,b", "a_b"],
      ["a/b\\c", "a_b_c"],
      ["héllo", "h_llo"],
      ["a_b", "a_b"],
      ["", "_"],
    ];
    for (const [host, tag] of cases) expect({ host, tag: hostTag(host) }).toEqual({ host, tag });
  });

  test("a tag never contains the claim-name separator", () => {
    for (const host of [",", "a,,b", ",x,"]) expect(hostTag(host)).not.toContain(",");
  });
});

describe("pidAlive", () => {
  test("this process and pid 1 are alive", () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(1)).toBe(true); // exists; kill(1, 0) gives EPERM when not root, which counts as alive
  });

  test("a reaped child is not alive", () => {
    expect(pidAlive(deadPid())).toBe(false);
  });

  test("what is not a positive whole number is never alive (kill(0) or kill(-1) would signal a group)", () => {
    for (const pid of [0, -1, -process.pid, 1.5, NaN, Infinity]) expect({ pid, alive: pidAlive(pid) }).toEqual({ pid, alive: false });
  });
});

describe("holderGone", () => {
  const lease = 1000;
  const here = storeOn("box 1");

  test("on this host: a live holder is kept until LOCAL_LEASE_FACTOR leases have passed", () => {
    expect(LOCAL_LEASE_FACTOR).toBe(10);
    expect(holderGone(here, "box 1", process.pid, 0, lease)).toBe(false);
    expect(holderGone(here, "box 1", process.pid, lease * 10, lease)).toBe(false);
    expect(holderGone(here, "box 1", process.pid, lease * 10 + 1, lease)).toBe(true);
  });

  test("on this host: a dead holder is gone at once", () => {
    expect(holderGone(here, "box 1", deadPid(), 0, lease)).toBe(true);
    expect(holderGone(here, "box 1", 0, 0, lease)).toBe(true);
  });

  test("the host is compared by tag, as claim names store it", () => {
    expect(holderGone(here, "box_1", process.pid, 0, lease)).toBe(false);
    expect(holderGone(here, "box_1", deadPid(), 0, lease)).toBe(true);
  });

  test("on another host only the lease counts, whatever the pid", () => {
    for (const pid of [process.pid, deadPid(), 0]) {
      expect(holderGone(here, "elsewhere", pid, lease, lease)).toBe(false);
      expect(holderGone(here, "elsewhere", pid, lease + 1, lease)).toBe(true);
    }
    expect(holderGone(here, "elsewhere", 1, -5000, lease)).toBe(false); // a claim from the future (clock skew)
  });
});

describe("isLive", () => {
  const peer = (patch: Partial<Peer>): Peer => ({
    a2a: 1, name: "p", host: "box", pid: process.pid, cwd: "/", git_root: null, tty: null, summary: "",
    started_at: 900, heartbeat: 1000, heartbeat_ms: 2000, ...patch,
  });
  const here = storeOn("box");

  test("live while the heartbeat is at most 3 heartbeat periods old", () => {
    expect(isLive(here, peer({}), 1000)).toBe(true);
    expect(isLive(here, peer({}), 1006)).toBe(true);
    expect(isLive(here, peer({}), 1006.5)).toBe(false);
    expect(isLive(here, peer({}), 995)).toBe(true); // heartbeat ahead of our clock
  });

  test("a heartbeat period of 0 (unset) means the default", () => {
    expect(DEFAULT_HEARTBEAT_MS).toBe(10_000);
    expect(isLive(here, peer({ heartbeat_ms: 0 }), 1030)).toBe(true);
    expect(isLive(here, peer({ heartbeat_ms: 0 }), 1030.5)).toBe(false);
  });

  test("on this host a fresh heartbeat from a dead pid is not live; on another host it is", () => {
    const dead = deadPid();
    expect(isLive(here, peer({ pid: dead }), 1000)).toBe(false);
    expect(isLive(here, peer({ host: "elsewhere", pid: dead }), 1000)).toBe(true);
    expect(isLive(here, peer({ host: "elsewhere", pid: dead }), 1007)).toBe(false);
  });
});
