// lib/core/config.ts: every setting read once from an environment into the Store, the store
// path (flag, env, default, "~"), and the root check that makes a path that can never be a
// store the same error on every command.
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_CLAIM_LEASE_MS, DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_BYTES, DEFAULT_MAX_UNREAD, DEFAULT_MAX_WAIT_SEC, DEFAULT_POLL_MS,
  DEFAULT_PROGRESS_MS, DEFAULT_TOPIC_KEEP_SEC, expandHome, readSettings, storeRoot,
} from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { platformFor } from "../../lib/core/platform";
import { homedir as homeOf } from "../../lib/core/location";
import { refusal } from "./support";

function scratch(): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), "a2a-config-"));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

describe("settings", () => {
  test("an empty environment gives every default", () => {
    expect(readSettings({})).toEqual({
      maxBytes: DEFAULT_MAX_BYTES, pollMs: DEFAULT_POLL_MS, watchMode: "auto", shared: false,
      maxUnread: DEFAULT_MAX_UNREAD, claimLeaseMs: DEFAULT_CLAIM_LEASE_MS, heartbeatMs: DEFAULT_HEARTBEAT_MS,
      agent: undefined, repoName: undefined, maxWaitSec: DEFAULT_MAX_WAIT_SEC, progressMs: DEFAULT_PROGRESS_MS, durability: "fsync", log: false, debug: false,
      platform: platformFor(process.platform), topicKeepSec: DEFAULT_TOPIC_KEEP_SEC,
    });
  });

  test("each variable lands in its field", () => {
    const s = readSettings({
      A2A_MAX_BYTES: "2048", A2A_POLL_MS: "7", A2A_WATCH: "poll", A2A_SHARED: "1", A2A_MAX_UNREAD: "3",
      A2A_CLAIM_LEASE_MS: "900", A2A_HEARTBEAT_MS: "150", A2A_AGENT: "alice", A2A_REPO: "app", A2A_MCP_MAX_WAIT: "2.5",
      A2A_MCP_PROGRESS_MS: "250", A2A_DURABILITY: "none", A2A_LOG: "1", A2A_DEBUG: "yes", A2A_PLATFORM: "portable", A2A_TOPIC_KEEP: "7d",
    });
    expect(s).toEqual({
      maxBytes: 2048, pollMs: 7, watchMode: "poll", shared: true, maxUnread: 3, claimLeaseMs: 900, heartbeatMs: 150,
      agent: "alice", repoName: "app", maxWaitSec: 2.5, progressMs: 250, durability: "none", log: true, debug: true,
      platform: platformFor("linux", "portable"), topicKeepSec: 7 * 86400,
    });
    expect(readSettings({ A2A_TOPIC_KEEP: "forever" }).topicKeepSec).toBeUndefined();
    expect(s.platform.kind).toBe("portable");
  });

  test("empty means unset", () => {
    expect(readSettings({ A2A_MAX_BYTES: "", A2A_AGENT: "", A2A_WATCH: "" })).toMatchObject({ maxBytes: DEFAULT_MAX_BYTES, agent: undefined, watchMode: "auto" });
  });

  test.each([
    ["A2A_MAX_BYTES", "0", /A2A_MAX_BYTES="0" is not a positive integer/],
    ["A2A_POLL_MS", "fast", /A2A_POLL_MS="fast" is not a positive integer/],
    ["A2A_MAX_UNREAD", "1.5", /A2A_MAX_UNREAD="1.5" is not a positive integer/],
    ["A2A_HEARTBEAT_MS", "99", /A2A_HEARTBEAT_MS="99" is not a whole number of at least 100 of milliseconds/],
    ["A2A_MCP_MAX_WAIT", "-1", /A2A_MCP_MAX_WAIT="-1" is not a positive number of seconds/],
    ["A2A_WATCH", "inotify", /A2A_WATCH="inotify" is not a watch mode: use auto, watch or poll/],
    ["A2A_DURABILITY", "maybe", /A2A_DURABILITY="maybe" is not a durability: use fsync .* or none/],
    ["A2A_PLATFORM", "macos", /A2A_PLATFORM="macos" is not a platform setting: use portable/],
    ["A2A_TOPIC_KEEP", "a month", /A2A_TOPIC_KEEP "a month" is not a duration/],
  ])("%s=%s is a usage error naming the variable", (key, value, message) => {
    const e = refusal(() => readSettings({ [key]: value }));
    expect(e.code).toBe("EUSAGE");
    expect(e.message).toMatch(message);
  });
});

describe("store path", () => {
  test("--dir wins over A2A_DIR, which wins over ~/.a2a", () => {
    expect(storeRoot("/x/flag", { A2A_DIR: "/x/env" })).toEqual({ root: "/x/flag", from: "dir" });
    expect(storeRoot(undefined, { A2A_DIR: "/x/env" })).toEqual({ root: "/x/env", from: "A2A_DIR" });
    expect(storeRoot(undefined, {})).toEqual({ root: join(homedir(), ".a2a"), from: "default" });
  });

  test("a leading ~ is the home directory, in the flag and in A2A_DIR; nowhere else", () => {
    expect(expandHome("~")).toBe(homedir());
    expect(expandHome("~/team/bus")).toBe(join(homedir(), "team/bus"));
    expect(expandHome("~bob/x")).toBe("~bob/x");
    expect(expandHome("a/~/b")).toBe("a/~/b");
    expect(storeRoot("~/.a2a", {}).root).toBe(join(homedir(), ".a2a"));
    expect(storeRoot(undefined, { A2A_DIR: "~/shared" }).root).toBe(join(homedir(), "shared"));
  });

  test("an empty --dir or A2A_DIR is refused, not taken for the default", () => {
    expect(refusal(() => storeRoot("", {})).message).toMatch(/the store directory given is empty/);
    expect(refusal(() => storeRoot(undefined, { A2A_DIR: "" })).message).toMatch(/A2A_DIR is set but empty/);
  });
});

describe("openStore", () => {
  test("a missing store is fine and nothing is created", () => {
    using d = scratch();
    const s = openStore({ dir: join(d.path, "a", "b"), env: {} });
    expect(s.root).toBe(join(d.path, "a", "b"));
    expect(readdirSync(d.path)).toEqual([]);
  });

  test("a file where the store (or a parent) should be is one clear error", () => {
    using d = scratch();
    writeFileSync(join(d.path, "f"), "");
    for (const dir of [join(d.path, "f"), join(d.path, "f", "deeper")]) {
      const e = refusal(() => openStore({ dir, env: {} }));
      expect(e.code).toBe("EIO");
      expect(e.message).toMatch(/cannot be a directory: .*\/f is a file/);
    }
  });

  test("each store has its own runtime state", () => {
    using d = scratch();
    mkdirSync(join(d.path, "s"));
    const a = openStore({ dir: join(d.path, "s"), env: {} });
    const b = openStore({ dir: join(d.path, "s"), env: {} });
    a.lastIdUs = 42;
    expect(b.lastIdUs).toBe(0);
    expect(a.watches).not.toBe(b.watches);
  });

  test("shared mode sets the group modes", () => {
    using d = scratch();
    expect(openStore({ dir: d.path, env: { A2A_SHARED: "1" } })).toMatchObject({ dirMode: 0o2770, fileMode: 0o640, shared: true });
    expect(openStore({ dir: d.path, env: {} })).toMatchObject({ dirMode: 0o700, fileMode: 0o600, shared: false });
  });
});

// node:os is loaded only when asked (its load is ~3% of a command's start-up): the answers that
// replace it must be its own.
describe("this machine's name and the home directory, without node:os until needed", () => {
  test("the store's host is os.hostname(), from /proc on Linux and from node:os elsewhere", () => {
    using d = scratch();
    expect(openStore({ dir: d.path, env: {} }).host).toBe(hostname());
    expect(platformFor("linux").hostname()).toBe(hostname());
    expect(platformFor("linux", "portable").hostname()).toBe(hostname());
  });

  test("the home directory is os.homedir(): $HOME when set, else the password database's", () => {
    expect(homeOf()).toBe(homedir());
    const saved = process.env.HOME;
    try {
      process.env.HOME = "/somewhere/else";
      expect(homeOf()).toBe("/somewhere/else");
      expect(expandHome("~/x")).toBe("/somewhere/else/x");
      process.env.HOME = "";
      expect(homeOf()).toBe(homedir());
    } finally {
      process.env.HOME = saved;
    }
  });
});
