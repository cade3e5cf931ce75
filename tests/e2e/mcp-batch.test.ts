// JSON-RPC batches (a JSON array of messages on one line) over `a2a mcp`'s stdio: MCP
// 2025-03-26 requires a server to accept them, 2025-06-18 removed them (cli/mcp/batch.ts).
// Under 2025-03-26 a batch is answered with one array of the responses to its requests (none
// for its notifications, an error for a bad element); an empty array, or a batch under a later
// version or before initialize, is one -32600 and runs nothing. A batch's requests wait their
// turn behind MAX_IN_FLIGHT, and its held answers count against MAX_UNWRITTEN. Raw pipes: the
// SDK client never sends a batch.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cancelOf, RawClient, toolCall } from "../harness/mcp";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, tempDir, testStore, until } from "../harness/run";

setDefaultTimeout(60_000);

async function server(dir: string, version: string): Promise<RawClient> {
  const c = new RawClient(dir, { A2A_AGENT: "batcher", A2A_LOG: "1" });
  expect((await c.initialize(15_000, version))?.result?.protocolVersion).toBe(version);
  return c;
}

// The next message the server wrote after `from` that `pred` accepts.
async function answer(c: RawClient, from: number, pred: (m: any) => boolean): Promise<any> {
  await until(() => c.seen.slice(from).some(pred), 30_000, "the server's answer");
  return c.seen.slice(from).find(pred);
}

const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
const parsed = (r: any) => JSON.parse(r.result.content[0].text);

describe("under 2025-03-26, a batch is served", () => {
  test("one array holds the answer to each request, an error for a bad element, nothing for a notification", async () => {
    using d = testStore();
    const c = await server(d.path, "2025-03-26");
    const mark = c.seen.length;
    c.send(`[${toolCall(1, "agent_start", { name: "job", task: "t" })},${ping(2)},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},7,${toolCall(3, "whoami")}]`);
    const arr = await answer(c, mark, Array.isArray);
    expect(arr).toHaveLength(4);
    const by = (id: unknown) => arr.find((m: any) => m.id === id);
    expect(parsed(by(1))).toMatchObject({ ok: true, name: "job" });
    expect(by(2).result).toEqual({});
    expect(parsed(by(3))).toMatchObject({ ok: true, name: "batcher" });
    expect(by(null).error.code).toBe(-32600);
    // The batch's requests were answered in the array only, and the session goes on.
    expect(c.seen.slice(mark).filter((m) => !Array.isArray(m) && m.id !== undefined)).toEqual([]);
    expect((await c.request("ping"))?.result).toEqual({});
    c.kill();
  });

  test("a batch of notifications only gets no answer; an empty array is one -32600", async () => {
    using d = testStore();
    const c = await server(d.path, "2025-03-26");
    const mark = c.seen.length;
    c.send('[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]');
    c.send("[]");
    const e = await answer(c, mark, (m) => !Array.isArray(m) && m.error);
    expect(e).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(e.error.message).toContain("empty batch");
    expect((await c.request("ping"))?.result).toEqual({});
    expect(c.seen.slice(mark).filter(Array.isArray)).toEqual([]);
    c.kill();
  });

  test("more requests than are served at once: each waits its turn, and a cancelled one is left out of the array", async () => {
    using d = testStore();
    const c = await server(d.path, "2025-03-26");
    const mark = c.seen.length;
    // 20 waits, more than MAX_IN_FLIGHT (16): the last ones are handed over only as others end.
    const waits = Array.from({ length: 20 }, (_, i) => toolCall(100 + i, "agent_wait", { name: "late", timeout: 60 }));
    c.send(`[${waits.join(",")},${ping(200)}]`);
    c.send(cancelOf(119)); // still waiting its turn behind the 16 served
    expect((await a2a(["publish", "late", "here"], { dir: d.path })).code).toBe(0);
    const arr = await answer(c, mark, Array.isArray);
    expect(arr.map((m: any) => m.id).sort((a: number, b: number) => a - b)).toEqual([...Array.from({ length: 19 }, (_, i) => 100 + i), 200]);
    for (const m of arr.filter((m: any) => m.id < 200)) expect(parsed(m)).toMatchObject({ ok: true, result: "here" });
    c.kill();
  });

  test("a batch whose answers pass MAX_UNWRITTEN (4 MiB) is answered in more than one array, holding no more than single lines would", async () => {
    using d = testStore();
    using t = tempDir();
    const big = join(t.path, "big.txt");
    writeFileSync(big, "x".repeat(1_000_000)); // each answer carries it twice (text and structuredContent): about 2 MB
    expect((await a2a(["publish", "big", "--file", big], { dir: d.path })).code).toBe(0);
    const c = await server(d.path, "2025-03-26");
    const mark = c.seen.length;
    c.send(`[${[1, 2, 3, 4].map((id) => toolCall(id, "agent_wait", { name: "big" })).join(",")}]`);
    await until(() => c.seen.slice(mark).filter(Array.isArray).flat().length === 4, 30_000, "all four answers");
    const arrays = c.seen.slice(mark).filter(Array.isArray);
    expect(arrays.map((a) => a.length)).toEqual([3, 1]); // the third passed the bound: the three held went out
    for (const m of arrays.flat()) expect(parsed(m).result).toHaveLength(1_000_000);
    c.kill();
  });
});

describe("otherwise a batch is refused whole, with one -32600, and runs nothing", () => {
  for (const when of ["2025-06-18", "before initialize"]) {
    test(when, async () => {
      using d = testStore();
      const c = when === "before initialize" ? new RawClient(d.path, { A2A_AGENT: "batcher" }) : await server(d.path, when);
      const mark = c.seen.length;
      c.send(`[${toolCall(1, "agent_start", { name: "nope" })},${ping(2)}]`);
      const e = await answer(c, mark, (m) => m.error);
      expect(e).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      expect(e.error.message).toContain("2025-03-26");
      expect(e.error.message).not.toContain("\n");
      if (when === "before initialize") await c.initialize();
      const status = await c.request("tools/call", { name: "agent_status", arguments: {} });
      expect(parsed(status).total).toBe(0);
      expect(c.seen.slice(mark).filter(Array.isArray)).toEqual([]);
      c.kill();
    });
  }
});
