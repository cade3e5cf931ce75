// a2a export and a2a import through the binary (issue 22, "Moving a bus"): a file store holding
// every kind of record is exported and imported into a fresh file store and a fresh PostgreSQL
// database, and back from PostgreSQL into files; what the commands show is the same in each
// (read through the CLI, never through the files), a second import changes nothing, and the
// imported store goes on where the first stopped (versions, tokens, topic numbers and
// subscriber positions mean the same). Bad input is refused in one line with exit 2.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, childEnv, tempDir, type RunOptions } from "../harness/run";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";

setDefaultTimeout(120_000);

const skipPg = pgSkipReason();
if (skipPg) console.warn(`export.test.ts: the PostgreSQL parts are skipped: ${skipPg}`);

const dirs: { [Symbol.dispose](): void }[] = [];
const dbs: Database[] = [];
afterAll(async () => {
  for (const d of dirs) d[Symbol.dispose]();
  for (const db of dbs) await db.drop();
});
const fileStore = () => {
  const d = tempDir("a2a-export-");
  dirs.push(d);
  return join(d.path, "store");
};
const pgStore = async () => {
  const db = await freshDatabase((await pgServer())!);
  dbs.push(db);
  return db.url;
};

// Runs a command that must succeed; its stdout.
async function ok(args: string[], o: RunOptions): Promise<string> {
  const r = await a2a(args, o);
  if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

interface Filled {
  tasks: Record<string, string>; // role -> id
  token: string; // the claim token of the task left claimed
}

// The attachment of message "two": a blob every store it is moved to must hand back.
const NOTES = "the notes that go with message two\n";
const NOTES_DIGEST = `sha256:${new Bun.CryptoHasher("sha256").update(NOTES).digest("hex")}`;

// A file store with every kind of record.
async function fill(dir: string): Promise<Filled> {
  const o = { dir };
  await ok(["start", "report", "nightly"], o);
  await ok(["append", "report", "part one, "], o);
  await ok(["append", "report", "part two"], o);
  await ok(["publish", "report", "all good"], o); // version 4, 2 chunks
  await ok(["publish", "gone", "x"], o);
  await ok(["clear", "gone"], o); // a tombstone at version 2
  // Mail: bob has one read, two unread (one sent with a key); carol one held.
  await ok(["allow", "alice", "--as", "bob"], o);
  await ok(["send", "bob", "one", "--as", "alice"], o);
  await ok(["recv", "--as", "bob"], o);
  const notes = join(dir, "..", `notes-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(notes, NOTES);
  await ok(["send", "bob", "two", "--as", "alice", "--attach", notes], o); // a blob, moved with the message
  await ok(["send", "bob", "three", "--as", "alice", "--key", "k-3"], o);
  await ok(["send", "carol", "spam", "--as", "mallory"], o);
  await ok(["policy", "allowlist", "--as", "carol"], o);
  // Topics: w2 made before any message (it sees them all), w1 reads the first three.
  await ok(["sub", "build.status", "--as", "w2"], o);
  for (const m of ["m1", "m2", "m3"]) await ok(["pub", "build.status", m, "--as", "ci"], o);
  await ok(["sub", "build.status", "--as", "w1"], o);
  await ok(["sub", "build.>", "--as", "w1", "--from-start"], o);
  await ok(["pub", "build.status", "m4", "--as", "ci"], o);
  // Tasks: done, dead after two failed attempts, claimed, open with a key, blocked on it.
  const add = async (...args: string[]) => (await ok(["task", "add", "q", ...args], o)).trim();
  const claim = async () => JSON.parse(await ok(["task", "claim", "q", "--as", "w", "--json"], o)) as { id: string; token: string };
  const tasks: Record<string, string> = {};
  tasks.done = await add("first");
  let c = await claim();
  await ok(["task", "done", c.id, c.token, "built"], o);
  tasks.dead = await add("flaky", "--max-attempts", "2");
  for (let i = 0; i < 2; i++) {
    c = await claim();
    await ok(["task", "fail", c.id, c.token, "--reason", `try ${i + 1} broke`], o);
  }
  tasks.claimed = await add("held");
  const held = await claim();
  tasks.open = await add("next", "--key", "k-open");
  tasks.blocked = await add("after it", "--after", tasks.open);
  await ok(["lease", "take", "db", "--as", "alice", "--ttl", "1h"], o);
  return { tasks, token: held.token };
}

// What the commands show of a store, writers left out (a store vouches for its own).
async function view(dir: string, f: Filled): Promise<Record<string, unknown>> {
  const o = { dir };
  const js = async (...args: string[]) => JSON.parse(await ok([...args, "--json"], o));
  const noWriter = (v: any): any => (Array.isArray(v) ? v.map(noWriter) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== "user").map(([k, x]) => [k, noWriter(x)])) : v);
  const out: Record<string, unknown> = {
    slots: await js("status"),
    report: await js("wait", "report"),
    stream: await ok(["tail", "report"], o),
    gone: (await a2a(["wait", "gone", "--after-version", "1", "--timeout", "0"], o)).code,
    bob: noWriter(await js("inbox", "--as", "bob")),
    carol: noWriter(await js("inbox", "--as", "carol", "--held")),
    policy: await js("policy", "--as", "carol"),
    topics: await js("topics"),
    messages: noWriter((await ok(["sub", "build.>", "--from-start", "--json"], o)).trimEnd().split("\n").map((l) => JSON.parse(l))),
    tasks: await js("task", "list"),
    leases: await js("lease", "list"),
  };
  for (const [role, id] of Object.entries(f.tasks)) out[`task ${role}`] = await js("task", "show", id);
  return out;
}

async function exportOf(dir: string): Promise<string> {
  return ok(["export"], { dir });
}

async function importInto(dir: string, file: string): Promise<{ records: number; counts: Record<string, { imported: number; already: number; kept: number }> }> {
  return JSON.parse(await ok(["import", file, "--json"], { dir }));
}

const total = (r: Awaited<ReturnType<typeof importInto>>, v: "imported" | "already" | "kept") => Object.values(r.counts).reduce((n, c) => n + c[v], 0);

// What the imported store does next is what the source would have done.
async function goesOn(dir: string, f: Filled): Promise<void> {
  const o = { dir };
  expect(await ok(["sub", "build.status", "--as", "w1"], o)).toContain("m4");
  expect(await ok(["sub", "build.status", "--as", "w1"], o)).toBe(""); // its position moved on
  const w2 = await ok(["sub", "build.status", "--as", "w2"], o);
  expect(["m1", "m2", "m3", "m4"].every((m) => w2.includes(m))).toBe(true); // made before them: sees them all
  expect(await ok(["pub", "build.status", "m5", "--as", "ci"], o)).toContain("#5");
  expect(await ok(["get", NOTES_DIGEST], o)).toBe(NOTES);
  const recv = await ok(["recv", "--as", "bob", "--all"], o);
  expect(recv).toContain("two");
  expect(recv).toContain("three");
  expect(recv).not.toContain("one");
  expect(await ok(["publish", "report", "again"], o)).toContain("version 5");
  expect(await ok(["task", "done", f.tasks.claimed, f.token, "ok"], o)).toContain("done"); // the source's claim token holds
  expect(JSON.parse(await ok(["task", "claim", "q", "--as", "w", "--json"], o)).id).toBe(f.tasks.open);
  expect(await ok(["lease", "renew", "db", "--as", "alice"], o)).toContain("db");
}

describe("a2a export and import", () => {
  let source: string;
  let filled: Filled;
  let exported: string;
  let before: Record<string, unknown>;
  const file = () => {
    const d = tempDir("a2a-export-file-");
    dirs.push(d);
    const p = join(d.path, "bus.jsonl");
    writeFileSync(p, exported);
    return p;
  };

  test("an export has a header, one record a line of every kind, and an end line", async () => {
    source = fileStore();
    filled = await fill(source);
    before = await view(source, filled);
    exported = await exportOf(source);
    const lines = exported.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ a2a: "export", version: 3, engine: "file" }); // 3: it holds a stream's run (2: a blob)
    expect(lines.at(-1)).toEqual({ kind: "end", records: lines.length - 2 });
    const kinds = new Set(lines.slice(1, -1).map((l) => l.kind));
    expect([...kinds].sort()).toEqual(["blob", "blob_part", "inbox", "lease", "message", "policy", "slot", "slot_chunk", "subscriber", "task", "topic_message"]);
    // A run's chunks are lines of their own after their slot line, which holds none.
    const run = lines.findIndex((l) => l.kind === "slot_chunk");
    expect(lines[run - 1]).toMatchObject({ kind: "slot", chunks: [] });
    expect(lines.slice(run, run + 2).map((l) => [l.kind, l.name, l.n])).toEqual([["slot_chunk", lines[run - 1].record.name, 1], ["slot_chunk", lines[run - 1].record.name, 2]]);
    expect(await view(source, filled)).toEqual(before); // exporting changed nothing
  });

  test("into a fresh file store: everything reads the same, a second import changes nothing, and it goes on", async () => {
    const target = fileStore();
    const first = await importInto(target, file());
    expect(total(first, "imported")).toBe(first.records);
    expect(await view(target, filled)).toEqual(before);
    const again = await importInto(target, file());
    expect({ imported: total(again, "imported"), already: total(again, "already"), kept: total(again, "kept") }).toEqual({ imported: 0, already: again.records, kept: 0 });
    expect(await view(target, filled)).toEqual(before);
    await goesOn(target, filled);
  });

  test.skipIf(skipPg !== undefined)("into a fresh PostgreSQL database and back into files: the same, twice", async () => {
    const db = await pgStore();
    const first = await importInto(db, file());
    expect(total(first, "imported")).toBe(first.records);
    expect(await view(db, filled)).toEqual(before);
    const again = await importInto(db, file());
    expect(total(again, "already")).toBe(again.records);
    // PostgreSQL to files: an export of the database reads the same in a directory again.
    const fromPg = await exportOf(db);
    expect(JSON.parse(fromPg.split("\n")[0]).engine).toBe("postgres");
    const back = fileStore();
    const r = await ok(["import", "-"], { dir: back, stdin: fromPg });
    expect(r).toMatch(/^imported \d+ of \d+ records from a postgres store's export; already there 0, kept 0\n/);
    expect(await view(back, filled)).toEqual(before);
    await goesOn(db, filled);
    await goesOn(back, filled);
  });

  test("-o FILE: the file is a whole export once the command ends; one that cannot be written leaves nothing, exit 1", async () => {
    const d = tempDir("a2a-export-o-");
    dirs.push(d);
    const to = join(d.path, "bus.jsonl");
    expect(await ok(["export", "-o", to], { dir: source })).toMatch(/^exported \d+ records to .*bus\.jsonl: 1 blob part, 1 blob, 2 slot, 2 stream chunk, 2 inbox, 4 message, 2 policy, 4 topic message, 2 subscriber, 5 task, 1 lease\n$/);
    expect(readFileSync(to, "utf8").split("\n").slice(1)).toEqual(exported.split("\n").slice(1)); // the header's time aside
    const bad = await a2a(["export", "-o", join(d.path, "missing", "bus.jsonl")], { dir: source });
    expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 1, stdout: "" });
    expect(bad.stderr).toMatch(/^a2a: writing the export to .*missing\/bus\.jsonl failed \(ENOENT\): .*\(the store is fine\)\n$/);
    expect(readdirSync(d.path)).toEqual(["bus.jsonl"]);
  });

  test("-o to a FIFO (or a device) writes through it and leaves it what it was: nothing is renamed over it", async () => {
    const d = tempDir("a2a-export-fifo-");
    dirs.push(d);
    const fifo = join(d.path, "pipe");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const reader = Bun.spawn(["cat", fifo], { stdout: "pipe" });
    expect(await ok(["export", "-o", fifo, "-q"], { dir: source })).toBe("");
    const got = await new Response(reader.stdout).text();
    expect(got.split("\n").slice(1)).toEqual(exported.split("\n").slice(1));
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(d.path)).toEqual(["pipe"]);
  });

  test("a newer record of the store is kept, counted and named: exit 4 after the report", async () => {
    const target = fileStore();
    await importInto(target, file());
    await ok(["publish", "report", "newer"], { dir: target }); // version 5 there, 4 in the export
    const r = await a2a(["import", file(), "--json"], { dir: target });
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout).counts.slot).toEqual({ imported: 0, already: 1, kept: 1 });
    expect(JSON.parse(r.stderr).error.message).toContain("slot report");
    expect(JSON.parse(await ok(["wait", "report", "--json"], { dir: target }))).toMatchObject({ version: 5, result: "newer" });
  });
});

// Issue 33: a store's own slot `schema` (version 1) was replaced by an unrelated `schema` at
// version 2 from another store's export, and the summary said "imported". Versions of two stores
// say nothing about each other: the store's own record stays, named, exit 4, on every run.
describe("an import never replaces a record it did not bring", () => {
  const own = async (target: string) => {
    await ok(["publish", "schema", "create table mine (id int);"], { dir: target });
    await ok(["lease", "take", "deploy", "--as", "bob", "--ttl", "1h"], { dir: target });
  };
  const exportOfOther = async () => {
    const other = fileStore();
    await ok(["publish", "schema", "create table theirs (id int);"], { dir: other });
    await ok(["publish", "schema", "create table theirs (id int, name text);"], { dir: other }); // version 2
    await ok(["lease", "take", "deploy", "--as", "alice", "--ttl", "1h"], { dir: other });
    await ok(["lease", "release", "deploy", "--as", "alice"], { dir: other });
    await ok(["publish", "notes", "theirs too"], { dir: other });
    const d = tempDir("a2a-export-other-");
    dirs.push(d);
    const p = join(d.path, "other.jsonl");
    writeFileSync(p, await exportOf(other));
    return p;
  };
  const targets = async () => [fileStore(), ...(skipPg ? [] : [await pgStore()])];

  test("a slot and a lease of the store's own are kept and named, exit 4, the rest imported; again the same; the same export twice into a fresh store says already there", async () => {
    const exp = await exportOfOther();
    for (const target of await targets()) {
      await own(target);
      for (const round of [1, 2]) {
        const r = await a2a(["import", exp], { dir: target });
        expect(r.code).toBe(4);
        expect(r.stdout).toContain(`imported ${round === 1 ? 1 : 0} of 3 records`);
        expect(r.stderr).toMatch(/^a2a: kept 2 records of this store that differ from the export's under the same name \(slot schema, lease deploy\): .*--replace-older\n$/);
        expect(await ok(["wait", "schema"], { dir: target })).toBe("create table mine (id int);");
        expect(await ok(["lease", "list"], { dir: target })).toContain("bob");
        expect(await ok(["wait", "notes"], { dir: target })).toBe("theirs too");
      }
    }
    const fresh = fileStore();
    await ok(["import", exp], { dir: fresh });
    expect(await ok(["import", exp], { dir: fresh })).toContain("already there 3, kept 0");
  });

  // The review of issue 33.1's fix: each chunk line of a kept stream was counted and named as a
  // record kept of its own (a kept 3-chunk stream said "kept 4").
  test("a stream of the store's own is kept once, named once, whatever its export's chunk lines", async () => {
    const src = fileStore();
    await ok(["start", "build", "compiling"], { dir: src });
    for (const line of ["one", "two", "three"]) await ok(["append", "build", line], { dir: src });
    const d = tempDir("a2a-export-stream-");
    dirs.push(d);
    const p = join(d.path, "stream.jsonl");
    writeFileSync(p, await exportOf(src));
    for (const target of await targets()) {
      await ok(["publish", "build", "mine"], { dir: target });
      const r = await a2a(["import", p, "--json"], { dir: target });
      expect(r.code).toBe(4);
      const rep = JSON.parse(r.stdout);
      expect(rep.counts.slot.kept).toBe(1);
      expect(rep.counts.slot_chunk.kept).toBe(0);
      expect(rep.kept).toEqual([{ kind: "slot", name: "build" }]);
      expect(await ok(["wait", "build"], { dir: target })).toBe("mine");
    }
  });

  test("topics: a number holding the store's own message and a subscriber at the store's own position are kept; the free numbers come in", async () => {
    const other = fileStore();
    for (const m of ["theirs 1", "theirs 2", "theirs 3"]) await ok(["pub", "news", m, "--as", "ci"], { dir: other });
    await ok(["sub", "news", "--as", "reader", "--from-start"], { dir: other }); // at 3 there
    const d = tempDir("a2a-export-other-");
    dirs.push(d);
    const exp = join(d.path, "topics.jsonl");
    writeFileSync(exp, await exportOf(other));
    for (const target of await targets()) {
      await ok(["pub", "news", "ours 1", "--as", "ops"], { dir: target });
      await ok(["sub", "news", "--as", "reader", "--from-start"], { dir: target }); // at 1 here
      const r = await a2a(["import", exp, "--json"], { dir: target });
      expect(r.code).toBe(4);
      expect(JSON.parse(r.stdout)).toMatchObject({
        counts: { topic_message: { imported: 2, already: 0, kept: 1 }, subscriber: { imported: 0, already: 0, kept: 1 } },
        kept: [{ kind: "topic_message", name: "news#1" }, { kind: "subscriber", name: "reader" }],
      });
      // The reader goes on from its own position: the two messages that came in, its own first one kept.
      const next = await ok(["sub", "news", "--as", "reader"], { dir: target });
      expect([next.includes("theirs 2"), next.includes("theirs 3"), next.includes("ours 1")]).toEqual([true, true, false]);
    }
  });

  test("--replace-older replaces an older version of a record with the export's, never a newer one", async () => {
    const exp = await exportOfOther();
    const target = fileStore();
    await own(target);
    const r = await a2a(["import", exp, "--replace-older", "--json"], { dir: target });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).counts).toMatchObject({ slot: { imported: 2, already: 0, kept: 0 }, lease: { imported: 1, already: 0, kept: 0 } });
    expect(await ok(["wait", "schema"], { dir: target })).toBe("create table theirs (id int, name text);");
    await ok(["publish", "schema", "moved on"], { dir: target }); // version 3: newer than the export's
    const again = await a2a(["import", exp, "--replace-older"], { dir: target });
    expect([again.code, again.stderr]).toEqual([4, expect.stringContaining("(slot schema)")]);
    expect(await ok(["wait", "schema"], { dir: target })).toBe("moved on");
  });
});

// A claim in flight is a reader's hold, which does not move with the store: the message comes as
// unread. The claim is made as a reader makes it on the file engine (the one rename recv does
// between claiming and settling), since no command leaves one standing.
test("a message claimed by a reader at the instant of the export is exported and imported as unread", async () => {
  const src = fileStore();
  const id = (await ok(["send", "bob", "in flight", "--as", "alice"], { dir: src })).trim().split(" ")[1];
  mkdirSync(join(src, "inbox", "bob", "claim"), { recursive: true });
  renameSync(join(src, "inbox", "bob", "new", `${id}.json`), join(src, "inbox", "bob", "claim", `${id},elsewhere,${process.pid},${Date.now()}`));
  expect(JSON.parse(await ok(["inbox", "--as", "bob", "--json"], { dir: src })).counts.unread).toBe(1); // the claim counts as unread there too
  const text = await exportOf(src);
  expect(text.split("\n").filter((l) => l.includes(id)).map((l) => JSON.parse(l).place)).toEqual(["unread"]);
  const target = fileStore();
  await ok(["import", "-"], { dir: target, stdin: text });
  const got = await ok(["recv", "--as", "bob"], { dir: target });
  expect(got).toContain("in flight");
});

describe("a2a import refuses what is not a whole export, in one line, exit 2", () => {
  const store = () => fileStore();
  const refuse = async (input: string | Buffer, pattern: RegExp, viaFile = true) => {
    const dir = store();
    let r;
    if (viaFile) {
      const d = tempDir("a2a-bad-");
      dirs.push(d);
      writeFileSync(join(d.path, "bad.jsonl"), input);
      r = await a2a(["import", join(d.path, "bad.jsonl")], { dir });
    } else r = await a2a(["import", "-"], { dir, stdin: input });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(pattern);
    return dir;
  };
  const whole = async () => {
    const src = fileStore();
    await ok(["publish", "a", "1"], { dir: src });
    await ok(["publish", "b", "2"], { dir: src });
    await ok(["pub", "t", "m", "--as", "x"], { dir: src });
    return exportOf(src);
  };

  test("not JSON, another header, a newer version", async () => {
    await refuse("hello\nworld\n", /not an a2a export/);
    await refuse('{"a2a":"something","version":1}\n', /not an a2a export/);
    await refuse("", /not an a2a export \(it is empty\)/);
    await refuse(Buffer.from([0x7b, 0xff, 0xfe, 0x0a]), /not UTF-8 text \(from line 1 on\)/);
    await refuse('{"a2a":"export","version":4,"engine":"file","exported_at":1}\n{"kind":"end","records":0}\n', /format version 4.*reads versions 1 to 3/);
  });

  test("a truncated last line in a file: its line number is named and nothing is written", async () => {
    const text = await whole();
    const lines = text.trimEnd().split("\n");
    const cut = lines.slice(0, -2).join("\n") + "\n" + lines.at(-2)!.slice(0, 20);
    const dir = await refuse(cut, new RegExp(`line ${lines.length - 1} of the export is damaged`));
    expect(await ok(["status", "--json"], { dir })).toBe("[]\n");
    expect(await ok(["topics", "--json"], { dir })).toBe("[]\n");
  });

  test("an export cut at a line boundary is told from a whole one; from a pipe, rerunning the whole export completes it", async () => {
    const text = await whole();
    const lines = text.trimEnd().split("\n");
    const dir = await refuse(lines.slice(0, 3).join("\n") + "\n", /ends at line 3 without its end line: it was cut short/, false);
    expect(JSON.parse(await ok(["status", "--json"], { dir })).map((s: { name: string }) => s.name).sort()).toEqual(["a", "b"]); // imported so far, whole
    const r = JSON.parse(await ok(["import", "-", "--json"], { dir, stdin: text }));
    expect(r.counts.slot).toEqual({ imported: 0, already: 2, kept: 0 });
    expect(r.counts.topic_message).toEqual({ imported: 1, already: 0, kept: 0 });
  });

  test("a line longer than any export writes is refused as it passes the bound, in bounded memory (a 300 MB line)", async () => {
    const dir = store();
    const p = Bun.spawn({ cmd: [BIN, "import", "-"], env: childEnv({ dir }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    // Its own peak RSS, read from /proc as it is fed (Bun's resourceUsage() of a child reports
    // the largest of every child so far: in a full run, another test's).
    let peak = 0;
    const hwm = () => {
      try {
        peak = Math.max(peak, 1024 * Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.pid}/status`, "utf8"))?.[1] ?? 0));
      } catch {
        // gone
      }
    };
    const feed = (async () => {
      try {
        p.stdin.write('{"a2a":"export","version":2,"engine":"file","exported_at":1}\n{"kind":"message","agent":"a","body":"');
        const mib = Buffer.alloc(1024 * 1024, 0x61);
        for (let i = 0; i < 300; i++) {
          p.stdin.write(mib);
          await p.stdin.flush();
          hwm();
        }
        p.stdin.end();
      } catch {
        // the import refused the line and is gone: the pipe is closed
      }
    })();
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    await feed;
    expect([code, stderr]).toEqual([2, `a2a: line 2 of the export is over ${98 * 1024 * 1024} bytes, longer than any line a2a export writes: this is not an a2a export, or it is damaged; take a new export\n`]);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(320 * 1024 * 1024); // the bound (98 MiB) and the runtime, not the line (161 MiB here; 1.36 GB before)
    expect(await ok(["status", "--json"], { dir })).toBe("[]\n");
  });

  test("an export of an earlier a2a (version 2, a run's chunks inside its slot line) still imports whole", async () => {
    const src = fileStore();
    await ok(["start", "log", "tail"], { dir: src });
    for (const c of ["one ", "two ", "three"]) await ok(["append", "log", c], { dir: src });
    const lines = (await exportOf(src)).trimEnd().split("\n").map((l) => JSON.parse(l));
    const chunks = lines.filter((l) => l.kind === "slot_chunk").map((l) => l.text);
    expect(chunks).toEqual(["one ", "two ", "three"]);
    const old = lines.filter((l) => l.kind !== "slot_chunk").map((l) => (l.kind === "slot" ? { ...l, chunks } : l.kind === "end" ? { kind: "end", records: l.records - 3 } : l.a2a ? { ...l, version: 2 } : l));
    const dir = store();
    await ok(["import", "-"], { dir, stdin: old.map((l) => JSON.stringify(l)).join("\n") + "\n" });
    expect(await ok(["tail", "log"], { dir })).toBe("one two three");
  });

  test("a damaged record (a name that is no name) is refused by its line number", async () => {
    const text = await whole();
    const lines = text.trimEnd().split("\n");
    lines[1] = lines[1].replace('"name":"a"', '"name":"../a"');
    await refuse(lines.join("\n") + "\n", /line 2 of the export is damaged \(a slot record: .*invalid slot name/);
  });
});
