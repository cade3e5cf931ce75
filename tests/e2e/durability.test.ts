// Power-cut durability, read off the system calls (strace): a power cut cannot be staged here,
// but what survives one is decided by the order of fsync, rename/link and mkdir, which strace
// shows exactly. A write a2a reports as done must have (docs/PROTOCOL.md §3): its bytes
// fsynced before they are renamed into place, then the directory holding the new name
// fsynced; every directory it created synced into its parent. With A2A_DURABILITY=none,
// no fsync at all. Skipped, with the reason printed, where strace is missing.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { a2a, tempDir } from "../harness/run";

setDefaultTimeout(60_000);

const strace = Bun.which("strace");
if (!strace) console.warn("durability.test.ts: skipping: strace is not installed (apt-get install -y strace)");

type Call = { op: "fsync" | "rename" | "link" | "mkdir"; path: string; to?: string };

// Runs a2a under strace and returns its fsync, rename, link and mkdir calls in order, each
// fsync named by the path its fd was opened with (fds are reused, so the last open wins).
async function calls(args: string[], dir: string, env: Record<string, string> = {}): Promise<Call[]> {
  const logDir = mkdtempSync(join(tmpdir(), "a2a-strace-"));
  try {
    const log = join(logDir, "log");
    const prefix = [strace!, "-f", "-qq", "-o", log, "-e", "trace=openat,open,fsync,fdatasync,rename,renameat,renameat2,link,linkat,mkdir,mkdirat"];
    const r = await a2a(args, { dir, env, prefix });
    expect(r.code).toBe(0);
    const fds = new Map<number, string>();
    const out: Call[] = [];
    for (const line of readFileSync(log, "utf8").split("\n")) {
      const m = line.match(/^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)/);
      if (!m || Number(m[3]) < 0) continue;
      const [, name, argText, ret] = m;
      const paths = [...argText.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((p) => p[1]);
      if (name === "openat" || name === "open") fds.set(Number(ret), paths[0]);
      else if (name === "fsync" || name === "fdatasync") out.push({ op: "fsync", path: fds.get(Number(argText)) ?? `fd ${argText}` });
      else if (name.startsWith("rename")) out.push({ op: "rename", path: paths[0], to: paths[1] });
      else if (name.startsWith("link")) out.push({ op: "link", path: paths[0], to: paths[1] });
      else if (name.startsWith("mkdir")) out.push({ op: "mkdir", path: paths[0] });
    }
    return out.filter((c) => c.path.startsWith(dir)); // the store's calls, not Bun's own
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

const at = (cs: Call[], pred: (c: Call) => boolean, what: string): number => {
  const i = cs.findIndex(pred);
  if (i < 0) throw new Error(`no ${what} in ${JSON.stringify(cs, null, 1)}`);
  return i;
};

// The one placing write into `dest`: its temp fsynced, then renamed or linked, then `dest`'s
// directory fsynced after it.
function expectDurablePlacement(cs: Call[], dest: string): void {
  const place = at(cs, (c) => (c.op === "rename" || c.op === "link") && c.to === dest, `rename/link to ${dest}`);
  const temp = cs[place].path;
  const syncedBytes = at(cs, (c) => c.op === "fsync" && c.path === temp, `fsync of ${temp}`);
  const syncedName = cs.findIndex((c, i) => i > place && c.op === "fsync" && c.path === dirname(dest));
  expect({ bytesBeforeName: syncedBytes < place, directorySyncedAfter: syncedName > place }).toEqual({ bytesBeforeName: true, directorySyncedAfter: true });
}

describe.skipIf(!strace)("a write a2a reports done survives a power cut (strace)", () => {
  test("publish: bytes fsynced, renamed into slots/, then slots/ fsynced", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0); // the store exists
    const cs = await calls(["publish", "r", "the result"], d.path);
    expectDurablePlacement(cs, join(d.path, "slots", "r.json"));
  });

  test("send to a new inbox: each directory it makes is synced into its parent, and the message into new/", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0);
    const cs = await calls(["send", "bob", "hello", "--as", "alice"], d.path);
    const made = cs.filter((c) => c.op === "mkdir").map((c) => c.path);
    expect(made).toContain(join(d.path, "inbox", "bob", "new"));
    for (const m of made) {
      const i = cs.findIndex((c) => c.op === "mkdir" && c.path === m);
      expect({ dir: m, parentSynced: cs.some((c, j) => j > i && c.op === "fsync" && c.path === dirname(m)) }).toEqual({ dir: m, parentSynced: true });
    }
    const message = cs.find((c) => (c.op === "rename" || c.op === "link") && c.to?.startsWith(join(d.path, "inbox", "bob", "new") + "/"));
    expect(message).toBeDefined();
    expectDurablePlacement(cs, message!.to!);
  });

  test("task add: the task's record is placed durably", async () => {
    using d = tempDir();
    expect((await a2a(["task", "add", "q", "first"], { dir: d.path })).code).toBe(0);
    const cs = await calls(["task", "add", "q", "second"], d.path);
    // tasks/q/ID/00000001.json (the open marker beside it, tasks/q/@open/ID, is a hint)
    const record = cs.find((c) => (c.op === "rename" || c.op === "link") && /\/tasks\/q\/\d[^/]*\/\d+\.json$/.test(c.to ?? ""));
    expect(record).toBeDefined();
    expectDurablePlacement(cs, record!.to!);
  });

  test("A2A_DURABILITY=none: publish and send fsync nothing", async () => {
    using d = tempDir();
    const env = { A2A_DURABILITY: "none" };
    expect((await a2a(["publish", "seed", "x"], { dir: d.path, env })).code).toBe(0);
    const cs = [...(await calls(["publish", "r", "v"], d.path, env)), ...(await calls(["send", "bob", "hi", "--as", "alice"], d.path, env))];
    expect(cs.some((c) => c.op === "rename" || c.op === "link")).toBe(true);
    expect(cs.filter((c) => c.op === "fsync")).toEqual([]);
  });
});
