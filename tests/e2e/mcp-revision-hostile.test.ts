// Revision 2026-07-28 on `a2a mcp`'s stdio against a client that does not play by the book
// (cli/mcp/revision.ts, issue 37): envelope values that are no strings, listens cancelled while
// they are being acknowledged, listens from a client that does not read its answers. Raw lines,
// several in one write where the order on the wire matters.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { RawClient, UnreadClient } from "../harness/mcp";
import { a2a, tempDir, testStore, until } from "../harness/run";

setDefaultTimeout(60_000);

const REVISION = "2026-07-28";
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY = "io.modelcontextprotocol/clientCapabilities";
const envelope = { [VERSION_KEY]: REVISION, [CAPS_KEY]: {}, "io.modelcontextprotocol/clientInfo": { name: "hostile", version: "1" } };
const line = (id: string, method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

// The messages the server wrote after `from` that `pred` accepts, once there are `n` of them.
async function seen(c: RawClient, from: number, pred: (m: any) => boolean, n = 1): Promise<any[]> {
  await until(() => c.seen.slice(from).filter(pred).length >= n, 30_000, "the server's messages");
  return c.seen.slice(from).filter(pred);
}

describe("revision 2026-07-28: hostile envelopes", () => {
  test("an envelope value no string can be made of is refused with its code, and the requests after it in the same write are served", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "hostile" });
    try {
      // {"toString": 1}: String() of it throws; that threw out of the transport's reader and
      // lost this request and every line after it in the chunk, unanswered.
      const lines = [
        line("bad-version", "tools/list", { _meta: { [VERSION_KEY]: { toString: 1 }, [CAPS_KEY]: {} } }),
        line("bad-level", "tools/list", { _meta: { ...envelope, "io.modelcontextprotocol/logLevel": { toString: 1 } } }),
        line("after", "tools/list", { _meta: envelope }),
      ];
      c.send(lines.join("\n"));
      const answers = await seen(c, 0, (m) => ["bad-version", "bad-level", "after"].includes(m.id), 3);
      const by = Object.fromEntries(answers.map((m) => [m.id, m]));
      expect(by["bad-version"].error).toMatchObject({ code: -32022, data: { supported: [REVISION], requested: '{"toString":1}' } });
      expect(by["bad-version"].error.message).not.toContain("\n");
      // A log level that is none is no level: the request is served, with no log lines asked for.
      expect(by["bad-level"].result).toMatchObject({ resultType: "complete" });
      expect(by.after.result.tools.length).toBeGreaterThan(0);
      // A version as long as a line is not echoed whole, twice.
      const long = await c.request("tools/list", { _meta: { [VERSION_KEY]: "9".repeat(100_000), [CAPS_KEY]: {} } });
      expect(long.error.code).toBe(-32022);
      expect(JSON.stringify(long.error).length).toBeLessThan(1000);
    } finally {
      c.kill();
    }
  });
});

describe("revision 2026-07-28: listens cancelled while acknowledged", () => {
  test("a listen cancelled right behind its request leaves its slot watched for nobody: an initialize later sends no update of it", async () => {
    using d = testStore();
    for (const name of ["watched", "marker"]) expect((await a2a(["publish", name, "v1"], { dir: d.path })).code).toBe(0);
    const c = new RawClient(d.path, { A2A_AGENT: "canceller" });
    try {
      // Each cancel follows its listen in the same write: the unsubscribe a2a makes for it
      // overtook the subscribe's baseline read, which then subscribed the slot again.
      for (let i = 0; i < 20; i++) {
        const listen = line(`listen-${i}`, "subscriptions/listen", { notifications: { resourceSubscriptions: ["a2a://slot/watched"] }, _meta: envelope });
        c.send(`${listen}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: `listen-${i}` } })}`);
      }
      expect((await c.request("tools/list", { _meta: envelope })).result).toBeDefined();
      // A session now: its updates go out unsolicited, for what it subscribed (the marker) only.
      expect((await c.initialize(15_000, "2025-11-25")).result.protocolVersion).toBe("2025-11-25");
      expect((await c.request("resources/subscribe", { uri: "a2a://slot/marker" })).result).toEqual({});
      const mark = c.seen.length;
      // The slots' changes are read in the order they came: the marker's update comes after
      // any of the watched slot's.
      expect((await a2a(["publish", "watched", "v2"], { dir: d.path })).code).toBe(0);
      expect((await a2a(["publish", "marker", "v2"], { dir: d.path })).code).toBe(0);
      await seen(c, mark, (m) => m.method === "notifications/resources/updated" && m.params?.uri === "a2a://slot/marker");
      expect(c.seen.slice(mark).filter((m) => m.method === "notifications/resources/updated").map((m) => m.params.uri)).toEqual(["a2a://slot/marker"]);
      expect(c.seen.some((m) => typeof m.id === "string" && m.id.startsWith("listen-"))).toBe(false);
    } finally {
      c.kill();
    }
  });
});

describe("revision 2026-07-28: inside a 2025-03-26 batch", () => {
  test("an element with the revision's envelope is refused in the batch's answer; the session's elements are served", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "batcher" });
    try {
      expect((await c.initialize(15_000, "2025-03-26")).result.protocolVersion).toBe("2025-03-26");
      const from = c.seen.length;
      // Served as the session's, they were answered otherwise than alone on their line: ping
      // (removed by the revision) answered, server/discover unknown.
      const batch = [
        { jsonrpc: "2.0", id: "discover", method: "server/discover", params: { _meta: envelope } },
        { jsonrpc: "2.0", id: "ping", method: "ping", params: { _meta: envelope } },
        { jsonrpc: "2.0", id: "session", method: "ping" },
      ];
      c.send(JSON.stringify(batch));
      await until(() => c.seen.length > from && Array.isArray(c.seen.at(-1)), 30_000, "the batch's answer");
      const answers = Object.fromEntries((c.seen.at(-1) as any[]).map((m) => [m.id, m]));
      for (const id of ["discover", "ping"]) {
        expect(answers[id].error).toMatchObject({ code: -32600 });
        expect(answers[id].error.message).toContain("send it alone on its line");
      }
      expect(answers.session.result).toEqual({});
      // Alone on its line, the same request is the revision's.
      expect((await c.request("server/discover", { _meta: envelope })).result.supportedVersions).toEqual([REVISION]);
    } finally {
      c.kill();
    }
  });
});

describe("revision 2026-07-28: request ids", () => {
  test("a client's request whose id is the one a2a gave its own request (arming a listen) gets its own answer", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "guesser" });
    try {
      // a2a's first own request had the id a2a-2026-07-28-1: a client's tools/list of that id
      // got the resources/list answer a2a made to arm the listen, or none.
      const from = c.seen.length;
      c.send([line("listen", "subscriptions/listen", { notifications: { resourcesListChanged: true }, _meta: envelope }), line(`a2a-${REVISION}-1`, "tools/list", { _meta: envelope })].join("\n"));
      await seen(c, from, (m) => m.method === "notifications/subscriptions/acknowledged");
      const [answer] = await seen(c, from, (m) => m.id === `a2a-${REVISION}-1`);
      expect(answer.result.tools.map((t: any) => t.name)).toContain("agent_publish");
      expect(answer.result.resources).toBeUndefined();
    } finally {
      c.kill();
    }
  });
});

describe("revision 2026-07-28: listens on URIs that are no slot's own spelling", () => {
  test("a percent-escaped slot URI is left out of the ack (no update would ever match it), and subscribe refuses it naming the slot's URI", async () => {
    using d = testStore();
    expect((await a2a(["publish", "watched", "v1"], { dir: d.path })).code).toBe(0);
    const c = new RawClient(d.path, { A2A_AGENT: "escaper" });
    try {
      // %77 is "w": the slot's updates go out as a2a://slot/watched, which this listen's filter
      // never matched, though its ack said it was honored.
      const from = c.seen.length;
      c.send(line("escaped", "subscriptions/listen", { notifications: { resourceSubscriptions: ["a2a://slot/%77atched"] }, _meta: envelope }));
      const [end] = await seen(c, from, (m) => m.id === "escaped");
      expect(end.result).toMatchObject({ resultType: "complete" });
      expect(c.seen.slice(from).find((m) => m.method === "notifications/subscriptions/acknowledged").params.notifications).toEqual({});
      expect((await c.initialize(15_000, "2025-11-25")).result.protocolVersion).toBe("2025-11-25");
      const r = await c.request("resources/subscribe", { uri: "a2a://slot/%77atched" });
      expect(r.error.code).toBe(-32602);
      expect(r.error.message).toBe("not a slot's own URI: a2a://slot/%77atched: use a2a://slot/watched (resources/list shows them)");
    } finally {
      c.kill();
    }
  });
});

describe("revision 2026-07-28: a client that does not read its answers", () => {
  test("its listen waits its turn like any request, and is acknowledged once the client reads", async () => {
    using d = testStore();
    using f = tempDir("a2a-fifo-");
    expect((await a2a(["publish", "big", "-", "-q"], { dir: d.path, stdin: "x".repeat(1024 * 1024) })).code).toBe(0);
    const c = new UnreadClient(d.path, f.path, { A2A_LOG: "1" });
    try {
      // Answers of 2 MiB each that nobody reads: the server holds what comes next.
      const waits = Array.from({ length: 40 }, (_, i) => line(`w${i}`, "tools/call", { name: "agent_wait", arguments: { name: "big" }, _meta: envelope }));
      c.send(...waits);
      await c.stderrUntil((t) => /agent_wait -> ok/.test(t));
      c.send(line("held", "tools/list", { _meta: envelope }));
      await c.stderrUntil((t) => /not reading its answers/.test(t));
      // The listen was armed at once, past the bounds, and its ack, a notification sent while
      // answers waited unwritten, was refused: the client never heard its listen was in place.
      c.send(line("listen", "subscriptions/listen", { notifications: { resourcesListChanged: true }, _meta: envelope }));
      const r = c.reader();
      const ack = await r.until((m) => m.method === "notifications/subscriptions/acknowledged", 30_000);
      expect(ack.params).toMatchObject({ notifications: { resourcesListChanged: true }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen" } });
      await r.until((m) => m.id === "held");
      // In its turn: after every request before it was answered.
      const at = (pred: (m: any) => boolean) => r.seen.findIndex(pred);
      expect(at((m) => m.id === "held")).toBeLessThan(at((m) => m.method === "notifications/subscriptions/acknowledged"));
      r.stop();
    } finally {
      c.close();
    }
  });
});
