// a2a search through the compiled binary and the MCP SDK client, on the engine A2A_TEST_STORE
// names: the table and JSON rows, exit codes (nothing found: 0 with a note; bad query: 2, one
// line), and on the file engine the index as a cache: deleted or damaged, it is built again and
// the search answers as before; never written by a send.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, collect, ON_FILES, spawnA2A, tempDir, testStore } from "../harness/run";
import { connect } from "../harness/mcp";

setDefaultTimeout(90_000);

const STRACE = Bun.which("strace");

function walkDirs(dir: string, visit: (path: string) => void): void {
  visit(dir);
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walkDirs(join(dir, e.name), visit);
}

async function ok(args: string[], dir: string): Promise<string> {
  const r = await a2a(args, { dir });
  if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function seed(dir: string) {
  const m = JSON.parse(await ok(["send", "bob", "please re-run the schema migration", "--as", "alice", "--json"], dir));
  await ok(["send", "carol", "the schema secret for carol", "--as", "alice"], dir);
  await ok(["pub", "builds", "schema check passed", "--as", "carol"], dir);
  return m;
}

describe("a2a search", () => {
  test("a table best first with the match marked; --json rows; --in, --from, --limit", async () => {
    using d = testStore();
    const m = await seed(d.path);
    const human = await ok(["search", "schema", "--as", "bob"], d.path);
    const lines = human.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KIND +ID +FROM +AGE +MATCH$/);
    expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 3))).toEqual(expect.arrayContaining([["message", m.id, "alice"], ["topic", "builds#1", "carol"]]));
    expect(lines).toHaveLength(3); // carol's mail is not bob's to find
    expect(human).toContain("please re-run the «schema» migration");

    const rows = JSON.parse(await ok(["search", "re-run", "--as", "bob", "--json"], d.path));
    expect(rows).toEqual([{ kind: "message", id: m.id, author: "alice", time: expect.any(Number), snippet: "please «re»-«run» the schema migration" }]);
    expect(JSON.parse(await ok(["search", "schema", "--in", "topics", "--as", "bob", "--json"], d.path)).map((r: any) => r.id)).toEqual(["builds#1"]);
    expect(JSON.parse(await ok(["search", "schema", "--from", "carol", "--as", "bob", "--json"], d.path)).map((r: any) => r.id)).toEqual(["builds#1"]);
    expect(JSON.parse(await ok(["search", "schema", "--limit", "1", "--as", "bob", "--json"], d.path))).toHaveLength(1);
    expect(JSON.parse(await ok(["search", "schema", "--since", "1h", "--as", "bob", "--json"], d.path))).toHaveLength(2);
  });

  test("nothing found: exit 0, empty stdout, a note on stderr ([] with --json)", async () => {
    using d = testStore();
    await seed(d.path);
    const r = await a2a(["search", "platypus", "--as", "bob"], { dir: d.path });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "", "a2a: nothing found for bob\n"]);
    const j = await a2a(["search", "platypus", "--as", "bob", "--json"], { dir: d.path });
    expect([j.code, j.stdout.trim(), j.stderr]).toEqual([0, "[]", ""]);
  });

  test("bad input: exit 2, one line naming the fix", async () => {
    using d = testStore();
    for (const args of [['"unclosed'], ["a*b"], ["---"], ["x", "--in", "inboxes"], ["x", "--since", "yesterday"], ["x", "--limit", "0"], ["x", "--limit", "many"]]) {
      const r = await a2a(["search", ...args, "--as", "bob"], { dir: d.path });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toStartWith("a2a: ");
    }
  });

  test.if(ON_FILES)("the file engine's index is a cache: 0600, never written by a send, rebuilt when deleted or damaged", async () => {
    using d = testStore();
    const m = await seed(d.path);
    const dir = join(d.path, "index");
    const file = join(dir, `${process.getuid!()}.sqlite`);
    expect(existsSync(file)).toBe(false); // writers never make it
    const want = await ok(["search", "schema", "--as", "bob", "--json"], d.path);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // a message sent after is found (caught up), and the send did not touch the index
    const before = statSync(file).mtimeMs;
    const m2 = JSON.parse(await ok(["send", "bob", "schema again", "--as", "alice", "--json"], d.path));
    expect(statSync(file).mtimeMs).toBe(before);
    expect(JSON.parse(await ok(["search", "schema", "--in", "mail", "--as", "bob", "--json"], d.path)).map((r: any) => r.id).sort()).toEqual([m.id, m2.id].sort());
    // deleted: rebuilt
    for (const f of readdirSync(dir)) Bun.spawnSync(["rm", "-f", join(dir, f)]);
    expect(JSON.parse(await ok(["search", "schema", "--as", "bob", "--json"], d.path))).toHaveLength(3);
    expect(existsSync(file)).toBe(true);
    // damaged: garbage in place of the database
    writeFileSync(file, "this is not a database ".repeat(500));
    const r = await a2a(["search", "migration", "--as", "bob", "--json"], { dir: d.path });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout).map((x: any) => x.id)).toEqual([m.id]);
    expect(JSON.parse(want).map((x: any) => x.id)).toContain(m.id);
  });

  test.if(ON_FILES)("the file engine passes over directories unchanged since a settled reading, and sees every change after one", async () => {
    using d = testStore();
    await seed(d.path);
    // Every directory made an hour old: the next search reads them and trusts that reading.
    const old = new Date(Date.now() - 3600_000);
    const age = () => walkDirs(d.path, (p) => utimesSync(p, old, old));
    age();
    expect(JSON.parse(await ok(["search", "schema", "--as", "bob", "--json"], d.path))).toHaveLength(2);
    const m = JSON.parse(await ok(["send", "bob", "schema drift", "--as", "alice", "--json"], d.path));
    await ok(["pub", "builds", "schema drift too", "--as", "carol"], d.path);
    expect(JSON.parse(await ok(["search", "drift", "--as", "bob", "--json"], d.path)).map((r: any) => r.id).sort()).toEqual([m.id, "builds#2"].sort());
    age();
    expect(JSON.parse(await ok(["search", "drift", "--as", "bob", "--json"], d.path))).toHaveLength(2);
    await ok(["recv", "--as", "bob", "--all"], d.path); // moves bob's mail to read: still his
    expect(JSON.parse(await ok(["search", "drift", "--in", "mail", "--as", "bob", "--json"], d.path)).map((r: any) => r.id)).toEqual([m.id]);
  });

  // Proportional to what changed: one new message lists the new/ it landed in, not the inbox's
  // read mail in cur/ nor the other places (strace lists every directory the search opens).
  test.if(ON_FILES && !!STRACE)("after one new message the file engine lists only the directory it landed in", async () => {
    using d = testStore();
    await seed(d.path);
    await ok(["recv", "--as", "bob", "--all"], d.path); // bob's first message in cur/
    const old = new Date(Date.now() - 3600_000);
    walkDirs(d.path, (p) => utimesSync(p, old, old));
    expect(JSON.parse(await ok(["search", "schema", "--as", "bob", "--json"], d.path))).toHaveLength(2);
    const m = JSON.parse(await ok(["send", "bob", "schema drift", "--as", "alice", "--json"], d.path));
    using t = tempDir("a2a-search-strace-");
    const log = join(t.path, "search.strace");
    const r = await collect(spawnA2A(["search", "drift", "--as", "bob", "--json"], { dir: d.path, prefix: [STRACE!, "-f", "-qq", "-e", "trace=open,openat", "-o", log] }));
    expect([r.code, JSON.parse(r.stdout).map((x: any) => x.id)]).toEqual([0, [m.id]]);
    const listed = readFileSync(log, "utf8").split("\n").filter((l) => l.includes("O_DIRECTORY")).map((l) => /"([^"]*)"/.exec(l)?.[1] ?? "").filter((p) => p.includes("/inbox/bob/"));
    expect(listed.map((p) => p.slice(p.indexOf("/inbox/bob/") + 1))).toEqual(["inbox/bob/new"]);
  });

  test("MCP search: the same rows for the session's agent, snippets framed as untrusted; bad query is a tool error", async () => {
    using d = testStore();
    const m = await seed(d.path);
    const s = await connect(d.path, { A2A_AGENT: "bob" }, { tools: "default,search" });
    try {
      const r = await s.structured("search", { query: "schema", in: ["mail"] });
      expect(r.ok).toBe(true);
      expect(r.hits).toEqual([{ kind: "message", id: m.id, author: "alice", time: expect.any(Number), snippet: "please re-run the «schema» migration" }]);
      const t = await s.call("search", { query: "schema", from: "carol" });
      expect((t.content[0] as { text: string }).text).toContain("topic builds#1 by carol: «schema» check passed");
      expect((t.content[0] as { text: string }).text).toContain("untrusted input");
      const bad = await s.call("search", { query: '"open' });
      expect(bad.isError).toBe(true);
      expect((bad.structuredContent as any).error).toBe("EUSAGE");
      expect((await s.structured("search", { query: "platypus" })).count).toBe(0);
    } finally {
      await s.close();
    }
  });
});
