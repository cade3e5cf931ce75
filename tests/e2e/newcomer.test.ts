// What a newcomer meets (issue 13), through the binary: errors under --json are JSON on
// stderr; usage errors name the command's own help; output that cannot be written is said to
// be the output's fault, not the store's; one closed-pipe rule; `append --lines` streams
// stdin in one process; `a2a topics`; `status --missing-ok` for the compare-and-set idiom.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, childEnv, ON_FILES, testStore, until } from "../harness/run";
import { expectCleanError, snapshot } from "./fixtures/core";
import { connect } from "../harness/mcp";

setDefaultTimeout(120_000);

const bash = async (script: string, dir: string) => {
  const p = Bun.spawn({ cmd: ["bash", "-c", script], env: { ...childEnv({ dir }), A2A_BIN: BIN }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
};

describe.concurrent("errors under --json are JSON on stderr", () => {
  test("not found, usage (commander's own) and conflict: {error: {code, message, exit}}", async () => {
    using d = testStore();
    const cases: [string[], string, number][] = [
      [["status", "nope", "--json"], "ENOTFOUND", 3],
      [["publish", "--json"], "EUSAGE", 2],
      [["wait", "x", "--timeout", "soon", "--json"], "EUSAGE", 2],
    ];
    for (const [args, code, exit] of cases) {
      const r = await a2a(args, { dir: d.path });
      expect(r.code).toBe(exit);
      expect(r.stderr.endsWith("\n") && r.stderr.split("\n").length === 2).toBe(true);
      const e = JSON.parse(r.stderr).error;
      expect({ args, code: e.code, exit: e.exit }).toEqual({ args, code, exit });
      expect(typeof e.message).toBe("string");
      expect(e.message).not.toStartWith("a2a:");
    }
    await a2a(["publish", "r", "v"], { dir: d.path });
    const lost = await a2a(["publish", "r", "w", "--if-version", "0", "--json"], { dir: d.path });
    expect(JSON.parse(lost.stderr).error).toMatchObject({ code: "ECONFLICT", exit: 4, data: { slot: "r", version: 1, expected: 0 } });
    // Without --json: the one line as always.
    expectCleanError(await a2a(["status", "nope"], { dir: d.path }), 3);
  });
});

describe.concurrent("usage errors name the command's own help", () => {
  test("a missing argument or a bad flag of publish says: see a2a publish --help", async () => {
    expect((await a2a(["publish"])).stderr).toBe("a2a: missing required argument 'name': see a2a publish --help\n");
    const r = await a2a(["wait", "x", "--bogus"]);
    expectCleanError(r, 2, /unknown option '--bogus'.*: see a2a wait --help\n$/);
  });
});

describe.concurrent("output that cannot be written", () => {
  test("status > /dev/full: exit 1, says the output is full, not the store; the store is unchanged", async () => {
    using d = testStore();
    await a2a(["publish", "r", "v"], { dir: d.path });
    const before = snapshot(d.path);
    const r = await bash(`"$A2A_BIN" status > /dev/full`, d.path);
    expectCleanError(r, 1, /^a2a: writing to stdout failed \(ENOSPC\): the output's device is full \(the store is fine\)/);
    expect(r.stderr).not.toContain("the disk is full");
    expect(snapshot(d.path)).toEqual(before);
  });

  test("recv > /dev/full leaves the message unread", async () => {
    using d = testStore();
    await a2a(["send", "bob", "keep me", "--as", "a"], { dir: d.path });
    const r = await bash(`"$A2A_BIN" recv --as bob > /dev/full`, d.path);
    expectCleanError(r, 1, /the output's device is full .*what was not shown stays unread/);
    expect((await a2a(["recv", "--as", "bob"], { dir: d.path })).stdout).toContain("keep me");
  });
});

describe.concurrent("one closed-pipe rule", () => {
  // Enough output that the reader leaves before it is all written.
  async function filled(dir: string) {
    for (let i = 0; i < 60; i++) await a2a(["pub", "news.x", `item ${i} ${"x".repeat(2000)}`], { dir });
    for (let i = 0; i < 60; i++) await a2a(["publish", `s${i}`, "y".repeat(2000)], { dir });
  }

  test("nothing durable read: status, wait and an anonymous sub exit 0 quietly", async () => {
    using d = testStore();
    await filled(d.path);
    await a2a(["publish", "big"], { dir: d.path, stdin: "z".repeat(500_000) });
    for (const cmd of ["status", "status --json", "wait big", "sub 'news.>' --from-start --json", "sub 'news.>' --from-start"]) {
      const r = await bash(`"$A2A_BIN" ${cmd} | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`, d.path);
      expect({ cmd, r }).toEqual({ cmd, r: { stdout: "0\n", stderr: "", code: 0 } });
    }
  });

  test("a durable position: sub --as exits 1, says so, and resumes after what was shown", async () => {
    using d = testStore();
    await filled(d.path);
    const r = await bash(`"$A2A_BIN" sub 'news.>' --as reader --from-start | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`, d.path);
    expect(r.stdout).toBe("1\n");
    expect(r.stderr).toBe("a2a: stdout closed before everything was written: what was not shown stays unread; run the command again\n");
    const next = await a2a(["sub", "news.>", "--as", "reader", "--json"], { dir: d.path });
    const ids = next.stdout.trim().split("\n").map((l) => JSON.parse(l).id);
    expect(ids.at(-1)).toBe(60);
    expect(ids[0]).toBeGreaterThan(1);
    expect(ids[0]).toBeLessThan(60);
  });
});

describe.concurrent("append --lines", () => {
  test("one process: a line lands while the producer still runs, the rest follows, exits at EOF", async () => {
    using d = testStore();
    const p = Bun.spawn({ cmd: [BIN, "append", "build", "--lines", "-q"], env: childEnv({ dir: d.path }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    p.stdin.write("first line\n");
    p.stdin.flush();
    // The first line lands while the producer is still running.
    await until(() => JSON.parse(Bun.spawnSync([BIN, "status", "build", "--json", "--missing-ok"], { env: childEnv({ dir: d.path }) }).stdout.toString())[0]?.chunks === 1, 20_000, "the first chunk");
    p.stdin.write("second\nthird, no newline");
    p.stdin.end();
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stderr).text()).toBe("");
    const chunks = (await a2a(["tail", "build", "--json"], { dir: d.path })).stdout.trim().split("\n").map((l) => JSON.parse(l).text);
    // The lines of one write may share a chunk; the first landed alone, while the producer ran.
    expect(chunks[0]).toBe("first line\n");
    expect(chunks.join("")).toBe("first line\nsecond\nthird, no newline");
    expect(chunks.length).toBeLessThanOrEqual(3);
  });

  test("lines that stdin brings at once go into one chunk: a flood costs an append per burst, not per line", async () => {
    using d = testStore();
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join("");
    const r = await a2a(["append", "flood", "--lines", "--json"], { dir: d.path, stdin: text });
    expect(r.code).toBe(0);
    const status = JSON.parse((await a2a(["status", "flood", "--json"], { dir: d.path })).stdout)[0];
    expect(status.chunks).toBeGreaterThanOrEqual(1);
    expect(status.chunks).toBeLessThan(50); // 5,000 lines in ~44 KiB: a read or a few, never a chunk a line
    expect((await a2a(["tail", "flood"], { dir: d.path })).stdout).toBe(text);
  });

  test("--flush gathers lines into one chunk; a confirmation counts them; usage errors", async () => {
    using d = testStore();
    const r = await a2a(["append", "b", "--lines", "--flush", "10s"], { dir: d.path, stdin: "a\nb\nc\n" });
    expect(r).toEqual({ stdout: "appended 1 chunk(s) to b\n", stderr: "", code: 0 });
    expect((await a2a(["tail", "b"], { dir: d.path })).stdout).toBe("a\nb\nc\n");
    expectCleanError(await a2a(["append", "b", "--flush", "1s", "x"], { dir: d.path }), 2, /--flush applies to --lines only/);
    expectCleanError(await a2a(["append", "b", "text", "--lines"], { dir: d.path }), 2, /--lines reads stdin/);
  });

  test("a published slot stops it with exit 4", async () => {
    using d = testStore();
    await a2a(["publish", "done-slot", "x"], { dir: d.path });
    expectCleanError(await a2a(["append", "done-slot", "--lines"], { dir: d.path, stdin: "late\n" }), 4, /already published/);
  });

  test("SIGTERM while reading stdin: exit 143, what was appended stays", async () => {
    using d = testStore();
    const p = Bun.spawn({ cmd: [BIN, "append", "s", "--lines"], env: childEnv({ dir: d.path }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    p.stdin.write("kept\n");
    p.stdin.flush();
    await until(() => (readTail(d.path) === "kept\n"), 20_000, "the first chunk");
    p.kill("SIGTERM");
    expect(await p.exited).toBe(143);
    expect(readTail(d.path)).toBe("kept\n");
  });
});

const readTail = (dir: string) => Bun.spawnSync([BIN, "tail", "s"], { env: childEnv({ dir }) }).stdout.toString();

describe.concurrent("a2a topics", () => {
  test("lists topics with message counts and named subscribers with what they have not read", async () => {
    using d = testStore();
    expect((await a2a(["topics"], { dir: d.path })).stdout).toBe("no topics yet: a2a pub TOPIC MESSAGE creates one\n");
    for (const m of ["one", "two", "three"]) await a2a(["pub", "build.status", m], { dir: d.path });
    await a2a(["pub", "deploy", "x"], { dir: d.path });
    await a2a(["sub", "build.>", "--as", "ci", "--from-start"], { dir: d.path });
    await a2a(["pub", "build.status", "four"], { dir: d.path });
    const list = JSON.parse((await a2a(["topics", "--json"], { dir: d.path })).stdout);
    expect(list.map((t: any) => [t.topic, t.messages, t.last_id, t.subscribers])).toEqual([
      ["build.status", 4, 4, [{ name: "ci", position: 3, unread: 1 }]],
      ["deploy", 1, 1, []],
    ]);
    const table = (await a2a(["topics"], { dir: d.path })).stdout.split("\n");
    expect(table[0]).toMatch(/^TOPIC +MESSAGES +LAST +SUBSCRIBERS$/);
    expect(table[1]).toMatch(/^build\.status +4 +\d+s +ci \(1 unread\)$/);
    expect(table[2]).toMatch(/^deploy +1 +\d+s +-$/);
    expect(JSON.parse((await a2a(["topics", "deploy", "--json"], { dir: d.path })).stdout).map((t: any) => t.topic)).toEqual(["deploy"]);
    expectCleanError(await a2a(["topics", "bad..pattern"], { dir: d.path }), 2);
  });
});

describe.concurrent("compare-and-set from nothing", () => {
  test("status --missing-ok reads an absent slot as [] (exit 0); --if-version 0 creates only", async () => {
    using d = testStore();
    expect(await a2a(["status", "cfg", "--json", "--missing-ok"], { dir: d.path })).toEqual({ stdout: "[]\n", stderr: "", code: 0 });
    expect(await a2a(["status", "cfg", "--missing-ok"], { dir: d.path })).toEqual({ stdout: "", stderr: "", code: 0 });
    const absent = await a2a(["status", "cfg", "--json"], { dir: d.path });
    expect([absent.code, JSON.parse(absent.stderr).error.message]).toEqual([3, expect.stringContaining("--missing-ok")]);
    expect((await a2a(["publish", "cfg", "v1", "--if-version", "0", "-q"], { dir: d.path })).code).toBe(0);
    expectCleanError(await a2a(["publish", "cfg", "v2", "--if-version", "0"], { dir: d.path }), 4);
    // A cleared slot is absent again: version 0 for compare-and-set.
    await a2a(["clear", "cfg"], { dir: d.path });
    expect((await a2a(["status", "cfg", "--json", "--missing-ok"], { dir: d.path })).stdout).toBe("[]\n");
    expect((await a2a(["publish", "cfg", "v3", "--if-version", "0", "-q"], { dir: d.path })).code).toBe(0);
  });
});

describe.concurrent("a typo in a name is pointed out, and nothing else changes", () => {
  test("wait, append and send name the close existing name on stderr; the command does what it was told", async () => {
    using d = testStore();
    const o = { dir: d.path };
    await a2a(["publish", "researcher", "x"], o);
    await a2a(["send", "reviewer", "first", "--as", "lead"], o);
    const w = await a2a(["wait", "researchr", "--timeout", "50ms"], o);
    expect(w.code).toBe(124);
    expect(w.stderr).toBe("a2a: timed out waiting for researchr: nothing published in time; raise --timeout or check the producer (a2a status researchr); no slot named researchr has ever been written: did you mean researcher?\n");
    // Issue 32: waiting before the publisher starts is the usual case (c28 while w28 exists):
    // a wait that is answered says nothing of names.
    await a2a(["publish", "w28", "x"], o);
    const c28 = a2a(["wait", "c28", "--timeout", "60s"], o);
    await a2a(["publish", "c28", "done"], o);
    expect(await c28).toEqual({ code: 0, stdout: "done", stderr: "" });
    const ap = await a2a(["append", "researcherx", "y"], o);
    expect(ap).toEqual({ code: 0, stdout: "appended chunk 1 to researcherx\n", stderr: "a2a: warning: no slot named researcherx, so this starts one; did you mean researcher?\n" });
    const s = await a2a(["send", "revieweer", "hi", "--as", "lead", "--json"], o);
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ to: "revieweer", did_you_mean: "reviewer" });
    expect(s.stderr).toBe("a2a: warning: nobody has had mail or been on the bus as revieweer; did you mean reviewer? (sent: it waits in revieweer's inbox)\n");
    // Said once: the name exists now. A wait for a slot that does not exist yet, with nothing
    // close to it, says nothing at all (scripts wait for slots before they exist).
    expect((await a2a(["send", "revieweer", "again", "--as", "lead"], o)).stderr).toBe("");
    expect((await a2a(["wait", "researcher", "--timeout", "1s"], o)).stderr).toBe("");
    expect((await a2a(["wait", "indexer", "--timeout", "50ms"], o)).stderr).toStartWith("a2a: timed out waiting for indexer");
  });

  // A torn record planted in peers/: the file engine's.
  test.if(ON_FILES)("send's guess comes from the names on the bus, whatever their records hold", async () => {
    using d = testStore();
    const o = { dir: d.path };
    await a2a(["send", "someone", "x", "--as", "lead"], o); // makes the store
    mkdirSync(join(d.path, "peers"), { recursive: true });
    writeFileSync(join(d.path, "peers", "designer.json"), "{torn"); // a peer whose record is being replaced
    const s = await a2a(["send", "desinger", "hi", "--as", "lead", "--json"], o);
    expect(JSON.parse(s.stdout)).toMatchObject({ to: "desinger", did_you_mean: "designer" });
    // The torn record's name is on the bus: a send to it is no typo.
    expect((await a2a(["send", "designer", "hi", "--as", "lead"], o)).stderr).toBe("");
  });
});

describe("a typo in a name, through the MCP server", () => {
  test("agent_wait and send_message say which existing name was likely meant", async () => {
    using d = testStore();
    await a2a(["publish", "researcher", "x"], { dir: d.path });
    await a2a(["send", "reviewer", "first", "--as", "lead"], { dir: d.path });
    const s = await connect(d.path, { A2A_AGENT: "lead" });
    try {
      const w = await s.structured("agent_wait", { name: "researchr", timeout: 1 });
      expect(w).toMatchObject({ ok: false, error: "timeout", state: expect.stringContaining("did you mean researcher?") });
      const sent = await s.structured("send_message", { to_id: "revieweer", message: "hi" });
      expect(sent).toMatchObject({ ok: true, to: "revieweer", did_you_mean: "reviewer", message: expect.stringContaining("did you mean reviewer?") });
    } finally {
      await s.close();
    }
  });
});
