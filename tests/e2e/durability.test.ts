// Power-cut durability, read off the system calls (strace): a power cut cannot be staged here,
// but what survives one is decided by the order of fsync, rename/link and mkdir, which strace
// shows exactly. A write a2a reports as done must have (docs/FILE-ENGINE.md §3): its bytes
// fsynced before they are renamed into place, then the directory holding the new name
// fsynced; every directory it created synced into its parent. With A2A_DURABILITY=none,
// no fsync at all. Skipped, with the reason printed, where strace is missing.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { a2a, ON_FILES, tempDir } from "../harness/run";

setDefaultTimeout(60_000);

const strace = Bun.which("strace");
if (!strace) console.warn("durability.test.ts: skipping: strace is not installed (apt-get install -y strace)");

type Call = { op: "fsync" | "rename" | "link" | "mkdir"; path: string; to?: string };

// Runs a2a under strace and returns its fsync, rename, link and mkdir calls in the store, in
// order, every path with the store's real path in front (-y names an fsync's fd by the path it
// resolves to, so a root that is a link shows as its target). A call cut in two by another
// thread's ("<unfinished ...>", then "<... NAME resumed>") is joined again.
async function calls(args: string[], dir: string, env: Record<string, string> = {}): Promise<Call[]> {
  const real = realpathSync(dir);
  const norm = (p: string) => (p.startsWith(dir + "/") || p === dir ? real + p.slice(dir.length) : p);
  const logDir = mkdtempSync(join(tmpdir(), "a2a-strace-"));
  try {
    const log = join(logDir, "log");
    const prefix = [strace!, "-f", "-qq", "-y", "-o", log, "-e", "trace=fsync,fdatasync,?rename,renameat,renameat2,?link,linkat,?mkdir,mkdirat"];
    const r = await a2a(args, { dir, env, prefix });
    expect(r.code).toBe(0);
    const pending = new Map<string, string>();
    const out: Call[] = [];
    for (const raw of readFileSync(log, "utf8").split("\n")) {
      let line = raw;
      const cut = raw.match(/^(\d+)\s+(.*) <unfinished \.\.\.>$/);
      if (cut) {
        pending.set(cut[1], cut[2]);
        continue;
      }
      const resumed = raw.match(/^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/);
      if (resumed) line = `${resumed[1]} ${pending.get(resumed[1]) ?? ""}${resumed[2]}`;
      const m = line.match(/^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)/);
      if (!m || Number(m[3]) < 0) continue;
      const [, name, argText] = m;
      const paths = [...argText.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((p) => norm(p[1]));
      if (name === "fsync" || name === "fdatasync") out.push({ op: "fsync", path: argText.match(/^\d+<(.*)>$/)?.[1] ?? `fd ${argText}` });
      else if (name.startsWith("rename")) out.push({ op: "rename", path: paths[0], to: paths[1] });
      else if (name.startsWith("link")) out.push({ op: "link", path: paths[0], to: paths[1] });
      else if (name.startsWith("mkdir")) out.push({ op: "mkdir", path: paths[0] });
    }
    // The store's calls, not Bun's own; an fsync of an fd strace could not name is kept, so a
    // stray one still counts against "fsync nothing".
    return out.filter((c) => c.path.startsWith(real) || c.path.startsWith("fd "));
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

// fsync, rename and mkdir of the store's files: the file engine's.
describe.skipIf(!strace || !ON_FILES)("a write a2a reports done survives a power cut (strace)", () => {
  test("publish: bytes fsynced, renamed into slots/, then slots/ fsynced", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0); // the store exists
    const cs = await calls(["publish", "r", "the result"], d.path);
    expectDurablePlacement(cs, join(realpathSync(d.path), "slots", "r.json"));
  });

  test("a store whose root is a link the user made (~/.a2a -> /data/a2a): the root is synced too", async () => {
    using d = tempDir();
    const target = join(d.path, "data");
    const link = join(d.path, "link");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(target);
    symlinkSync(target, link);
    const cs = await calls(["publish", "r", "the result"], link); // the first write: it makes slots/ and tmp/
    const real = realpathSync(target);
    for (const sub of ["slots", "tmp"]) {
      const i = at(cs, (c) => c.op === "mkdir" && c.path === join(real, sub), `mkdir of ${sub}/`);
      expect({ sub, rootSynced: cs.some((c, j) => j > i && c.op === "fsync" && c.path === real) }).toEqual({ sub, rootSynced: true });
    }
    expectDurablePlacement(cs, join(real, "store.json"));
    expectDurablePlacement(cs, join(real, "slots", "r.json"));
  });

  test("send to a new inbox: each directory it makes is synced into its parent, and the message into new/", async () => {
    using d = tempDir();
    expect((await a2a(["publish", "seed", "x"], { dir: d.path })).code).toBe(0);
    const cs = await calls(["send", "bob", "hello", "--as", "alice"], d.path);
    const made = cs.filter((c) => c.op === "mkdir").map((c) => c.path);
    expect(made).toContain(join(realpathSync(d.path), "inbox", "bob", "new"));
    for (const m of made) {
      const i = cs.findIndex((c) => c.op === "mkdir" && c.path === m);
      expect({ dir: m, parentSynced: cs.some((c, j) => j > i && c.op === "fsync" && c.path === dirname(m)) }).toEqual({ dir: m, parentSynced: true });
    }
    const message = cs.find((c) => (c.op === "rename" || c.op === "link") && c.to?.startsWith(join(realpathSync(d.path), "inbox", "bob", "new") + "/"));
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
