// What waits in an inbox costs a listing its count, not its bytes: 1,000 unread messages of
// 1 MiB each, written into new/ as a sender's rename leaves them (on PostgreSQL, inserted as
// rows as a delivery leaves them), then the prompt and
// session-start hooks and `a2a inbox` through the binary, each under a peak RSS bound that a
// listing reading every body (1.7 GB here) cannot meet. How long they take is bench/'s.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, collect, ON_FILES, spawnA2A, storeSql, tempDir, testStore, type RunOptions } from "../harness/run";

setDefaultTimeout(180_000); // writing 1 GB on a shared machine

const COUNT = 1000;
const BODY = 1024 * 1024 - 64; // characters (ASCII) of each body: a 1 MiB message
const RSS_BOUND = 200 * 1024 * 1024;

const d = tempDir("a2a-inbox-scale-");
const s = testStore();
afterAll(() => {
  s[Symbol.dispose]();
  d[Symbol.dispose]();
});
const store = ON_FILES ? join(d.path, "store") : s.path;
const ids: string[] = [];

beforeAll(async () => {
  expect((await a2a(["send", "bob", "first, small", "--as", "alice", "-q"], { dir: store })).code).toBe(0);
  const filler = "x".repeat(BODY - 12);
  const t0 = (Date.now() + 1000) * 1000; // after the small one: it is the oldest
  if (!ON_FILES) {
    // The same messages as rows of lib/pg/mail.ts, made by the server (a GB through psql's argv would not do).
    storeSql(store, `insert into messages (agent, id, place, sender, body, size, sent_at, host, pid)
      select 'bob', lpad((${t0} + i)::text, 16, '0') || '-0a7c-1k3d-' || lpad(to_hex(i), 6, '0'), 'unread', 'mallory',
             convert_to('big ' || lpad(i::text, 7, '0') || ' ' || repeat('x', ${BODY - 12}), 'UTF8'), ${BODY}, (${t0} + i) / 1e6, 'box', 4242
      from generate_series(0, ${COUNT - 1}) i`);
  }
  for (let i = 0; i < COUNT; i++) {
    const id = `${String(t0 + i).padStart(16, "0")}-0a7c-1k3d-${i.toString(16).padStart(6, "0")}`;
    const body = `big ${String(i).padStart(7, "0")} ${filler}`;
    // The encoding of lib/mail/message.ts (docs/FILE-ENGINE.md §8), written by hand.
    ids.push(id);
    if (!ON_FILES) continue;
    const rec = `{"a2a":1,"id":"${id}","from":"mallory","to":"bob","body":"${body}","size":${body.length},"sent_at":${(t0 + i) / 1e6},"reply_to":null,"host":"box","pid":4242}\n`;
    writeFileSync(join(store, "inbox", "bob", "new", `${id}.json`), rec);
  }
});

// Runs the binary to its end; its peak resident memory with the result. Through GNU time when
// there is one: a child forked from this (big) test runner counts the runner's pages until its
// exec, so the runner's own rusage of it overstates the binary's peak by the runner's size.
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
async function measured(args: string[], o: RunOptions) {
  const out = join(d.path, "rss");
  const p = spawnA2A(args, { dir: store, ...o, prefix: TIME ? [TIME, "-f", "%M", "-o", out] : [] });
  const r = await collect(p);
  return { ...r, rss: TIME ? Number(readFileSync(out, "utf8").trim()) * 1024 : (p.resourceUsage()?.maxRSS ?? Infinity) };
}

test("the prompt hook announces 1,000 unread 1 MiB messages without reading their bodies", async () => {
  const r = await measured(["hook", "user-prompt-submit"], { env: { A2A_AGENT: "bob" }, stdin: JSON.stringify({ cwd: d.path }) });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect({ rss: r.rss, under: r.rss < RSS_BOUND }).toEqual({ rss: r.rss, under: true });
  const ctx: string = JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
  expect(ctx).toMatch(new RegExp(`^a2a: ${COUNT + 1} new messages for you \\("bob"\\)`));
  // The five shown: the oldest, each body cut to its first 1,500 characters.
  expect(ctx).toContain("first, small\n");
  for (const i of [0, 1, 2, 3]) expect(ctx).toContain(`--- message ${ids[i]} from mallory`);
  expect(ctx).toContain(`big 0000000 ${"x".repeat(1500 - 12)} [...cut; check_messages has it all]\n`);
  expect(ctx).not.toContain(ids[4]);
  expect(ctx).toContain(`(${COUNT + 1 - 5} more not shown.)`);
});

test("session-start and a2a inbox count them the same way", async () => {
  const s = await measured(["hook", "session-start"], { env: { A2A_AGENT: "bob" }, stdin: JSON.stringify({ cwd: d.path }) });
  expect({ code: s.code, stderr: s.stderr }).toEqual({ code: 0, stderr: "" });
  expect({ rss: s.rss, under: s.rss < RSS_BOUND }).toEqual({ rss: s.rss, under: true });
  // Every one counted (a hook used to stop at the oldest 1,000).
  expect(JSON.parse(s.stdout).hookSpecificOutput.additionalContext).toContain(`${COUNT + 1} unread messages from alice, mallory`);

  const l = await measured(["inbox", "--as", "bob", "--limit", String(COUNT + 1)], {});
  expect({ code: l.code, stderr: l.stderr }).toEqual({ code: 0, stderr: "" });
  expect({ rss: l.rss, under: l.rss < RSS_BOUND }).toEqual({ rss: l.rss, under: true });
  expect(l.stdout.split("\n")[0]).toBe(`bob: ${COUNT + 1} unread, 0 read, 0 held`);
  // USER is who wrote each message: the file's owner (root), or on PostgreSQL the role the rows
  // were inserted as (the URL's user).
  const writer = ON_FILES ? "root" : new URL(store).username;
  expect(l.stdout.split("\n").filter((line) => new RegExp(` mallory +${writer} +\\S+ +unread +big \\d{7} x+`).test(line))).toHaveLength(COUNT);

  const j = await measured(["inbox", "--as", "bob", "--json", "--limit", "3"], {});
  const listing = JSON.parse(j.stdout);
  expect(listing.counts).toEqual({ unread: COUNT + 1, read: 0, held: 0, damaged: 0 });
  expect(listing.unread.map((m: { body: string; size: number; truncated: boolean }) => [m.body.length, m.size, m.truncated])).toEqual([
    [12, 12, false], [200, BODY, true], [200, BODY, true],
  ]);
});

// The hooks count what waits by name: they open only the few messages they name (at most 20)
// or show (at most 5), whatever waits and whatever the policy (a deny list here, which once
// made them read every sender); strace lists every file they open.
const STRACE = Bun.which("strace");
test.skipIf(!STRACE || !ON_FILES)("session-start, the prompt hook and stop open at most 20 of the 1,001 messages, under a deny list too", async () => {
  expect((await a2a(["deny", "eve", "--as", "bob", "-q"], { dir: store })).code).toBe(0);
  for (const event of ["session-start", "user-prompt-submit", "stop"]) {
    const log = join(d.path, `${event}.strace`);
    const r = await collect(spawnA2A(["hook", event], { dir: store, env: { A2A_AGENT: "bob" }, stdin: JSON.stringify({ cwd: d.path, stop_hook_active: false }), prefix: [STRACE!, "-f", "-qq", "-e", "trace=open,openat", "-o", log] }));
    expect({ event, code: r.code }).toEqual({ event, code: 0 });
    if (event === "stop") expect(JSON.parse(r.stdout)).toMatchObject({ decision: "block", reason: expect.stringContaining("1001 unread a2a messages") });
    const opened = readFileSync(log, "utf8").split("\n").filter((l) => l.includes("/inbox/bob/new/") && l.includes(".json"));
    expect({ event, few: opened.length <= 20, any: opened.length > 0 || event === "user-prompt-submit" }).toEqual({ event, few: true, any: true });
  }
});
