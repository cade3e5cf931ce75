// The MCP server against bad input on its stdin, per JSON-RPC 2.0: every line gets an answer
// a client waiting on an id can match (or id null when there is none), and the server goes on
// serving. Driven over a raw pipe, since the SDK client never sends such lines.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { RawClient } from "../harness/mcp";
import { a2a, testStore, until } from "../harness/run";

setDefaultTimeout(60_000);

async function server(dir: string): Promise<RawClient> {
  const c = new RawClient(dir, { A2A_LOG: "1" });
  expect((await c.initialize())?.result?.serverInfo?.name).toBe("a2a");
  return c;
}

const pingOk = async (c: RawClient) => expect((await c.request("ping"))?.result).toEqual({});

// The next message the server wrote after `from` that `pred` accepts.
async function answer(c: RawClient, from: number, pred: (m: any) => boolean): Promise<any> {
  await until(() => c.seen.slice(from).some(pred), 20_000, "the server's answer");
  return c.seen.slice(from).find(pred);
}

describe("bad input lines get JSON-RPC errors, and the server keeps serving", () => {
  test("malformed JSON: -32700 with id null", async () => {
    using d = testStore();
    const c = await server(d.path);
    const mark = c.seen.length;
    c.send('{"jsonrpc":"2.0","id":1,"method":');
    const e = await answer(c, mark, (m) => m.error);
    expect(e).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(e.error.message).not.toContain("\n");
    await pingOk(c);
    c.kill();
  });

  test('jsonrpc "1.0", an object id, no method: -32600, with the id when it is usable', async () => {
    using d = testStore();
    const c = await server(d.path);
    let mark = c.seen.length;
    c.send('{"jsonrpc":"1.0","id":5,"method":"ping"}');
    expect(await answer(c, mark, (m) => m.error)).toMatchObject({ id: 5, error: { code: -32600 } });
    mark = c.seen.length;
    c.send('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}');
    expect(await answer(c, mark, (m) => m.error)).toMatchObject({ id: null, error: { code: -32600 } });
    mark = c.seen.length;
    c.send("[1,2,3]");
    expect(await answer(c, mark, (m) => m.error)).toMatchObject({ id: null, error: { code: -32600 } });
    await pingOk(c);
    c.kill();
  });

  test("a line over 10 MiB: -32600 with its id, and the next request is served", async () => {
    using d = testStore();
    const c = await server(d.path);
    const mark = c.seen.length;
    const big = JSON.stringify({ jsonrpc: "2.0", id: 77, method: "tools/call", params: { name: "agent_publish", arguments: { name: "x", result: "y".repeat(11 * 2 ** 20) } } });
    c.send(big);
    const e = await answer(c, mark, (m) => m.error);
    expect(e).toMatchObject({ id: 77, error: { code: -32600 } });
    expect(e.error.message).toMatch(/request too large/);
    await pingOk(c);
    expect(await c.exitWithin(100)).toBe("alive");
    c.kill();
  });

  test("arguments: null and a bad percent-escape in a resource URI: one-line errors", async () => {
    using d = testStore();
    expect((await a2a(["publish", "r", "v"], { dir: d.path })).code).toBe(0);
    const c = await server(d.path);
    const st = await c.request("tools/call", { name: "agent_status", arguments: null });
    expect(st?.result?.isError ?? false).toBe(false); // no arguments needed: it just works
    const pub = await c.request("tools/call", { name: "agent_publish", arguments: null });
    const text = pub?.result?.content?.[0]?.text ?? pub?.error?.message;
    expect(text).toMatch(/^a2a: invalid arguments for agent_publish/);
    expect(text).not.toContain("\n");
    const res = await c.request("resources/read", { uri: "a2a://slot/%ZZ" });
    expect(res?.error?.code).toBe(-32602);
    expect(res.error.message).not.toContain("\n");
    expect(res.error.message).toMatch(/not a slot resource/);
    await pingOk(c);
    c.kill();
  });
});
