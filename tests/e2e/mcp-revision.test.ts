// MCP revision 2026-07-28 on `a2a mcp`'s stdio, beside the versions negotiated by initialize
// (cli/mcp/revision.ts, issue 37): no handshake, the envelope in each request's _meta,
// server/discover, resultType and cache hints on results, the envelope's errors, the methods
// the revision removed, and change notifications only through subscriptions/listen. Raw
// lines, so that every field on the wire is seen as a client of the revision reads it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { RawClient } from "../harness/mcp";
import { a2a, testStore, until } from "../harness/run";

setDefaultTimeout(60_000);

const REVISION = "2026-07-28";
const VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY = "io.modelcontextprotocol/clientCapabilities";
const SUB_KEY = "io.modelcontextprotocol/subscriptionId";
const envelope = { [VERSION_KEY]: REVISION, [CAPS_KEY]: {}, "io.modelcontextprotocol/clientInfo": { name: "revision-client", version: "2.0" } };
const withMeta = (params: Record<string, unknown> = {}, meta: Record<string, unknown> = envelope) => ({ ...params, _meta: { ...meta, ...((params._meta as object) ?? {}) } });

// Polls an asynchronous condition (a CLI command's output) until it holds, within limitMs.
async function eventually(cond: () => Promise<boolean>, limitMs: number, what: string): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await cond())) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

// The messages the server wrote after `from` that `pred` accepts, once there are `n` of them.
async function seen(c: RawClient, from: number, pred: (m: any) => boolean, n = 1): Promise<any[]> {
  await until(() => c.seen.slice(from).filter(pred).length >= n, 30_000, "the server's messages");
  return c.seen.slice(from).filter(pred);
}

describe("revision 2026-07-28 on stdio, no initialize", () => {
  test("server/discover says what a2a speaks; every result carries resultType, lists and reads their cache hints", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "modern" });
    try {
      const discover = await c.request("server/discover", withMeta());
      expect(discover.result).toMatchObject({
        supportedVersions: [REVISION],
        capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
        resultType: "complete",
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "a2a" } },
      });
      expect(typeof discover.result.instructions).toBe("string");
      const list = await c.request("tools/list", withMeta());
      expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
      expect(list.result.tools.map((t: any) => t.name)).toContain("agent_publish");
      const pub = await c.request("tools/call", withMeta({ name: "agent_publish", arguments: { name: "job", result: "done" } }));
      expect(pub.result).toMatchObject({ resultType: "complete", structuredContent: { ok: true, name: "job" } });
      expect(pub.result.ttlMs).toBeUndefined(); // a call is never cached
      const read = await c.request("resources/read", withMeta({ uri: "a2a://slot/job" }));
      expect(read.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
      expect(JSON.parse(read.result.contents[0].text)).toMatchObject({ name: "job", result: "done" });
      // The envelope's clientInfo names the session, as initialize's does.
      await eventually(async () => (await a2a(["peers"], { dir: d.path })).stdout.includes("revision-client"), 20_000, "peers to show the client");
    } finally {
      c.kill();
    }
  });

  test("Claude Code's discover is answered as a 2025 server answers it, so it takes the handshake whose channel carries a2a's wake", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "cc" });
    try {
      const claude = { ...envelope, "io.modelcontextprotocol/clientInfo": { name: "claude-code", version: "2.1.0" } };
      const discover = await c.request("server/discover", withMeta({}, claude));
      expect(discover.error).toMatchObject({ code: -32601 });
      const init = await c.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "claude-code", version: "2.1.0" } });
      expect(init.result).toMatchObject({ protocolVersion: "2025-11-25", capabilities: { experimental: { "claude/channel": {} } } });
    } finally {
      c.kill();
    }
  });

  test("a bad envelope, an unsupported version and the removed methods are refused with the revision's codes", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "modern" });
    try {
      const unsupported = await c.request("tools/list", withMeta({}, { ...envelope, [VERSION_KEY]: "2099-01-01" }));
      expect(unsupported.error).toMatchObject({ code: -32022, data: { supported: [REVISION], requested: "2099-01-01" } });
      const noCaps = await c.request("tools/list", { _meta: { [VERSION_KEY]: REVISION } });
      expect(noCaps.error).toMatchObject({ code: -32602, data: { envelope: { key: CAPS_KEY, problem: "missing" } } });
      expect(noCaps.error.message).toContain(CAPS_KEY);
      const bare = await c.request("server/discover", {});
      expect(bare.error).toMatchObject({ code: -32602, data: { envelope: { key: VERSION_KEY } } });
      for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe"]) {
        const r = await c.request(method, withMeta(method === "resources/subscribe" ? { uri: "a2a://slot/x" } : {}));
        expect(r.error?.code, method).toBe(-32601);
      }
      // Nothing of the above opened a session: the next request is served.
      expect((await c.request("tools/list", withMeta())).result.tools.length).toBeGreaterThan(0);
      for (const line of [unsupported, noCaps, bare]) expect(line.error.message).not.toContain("\n");
    } finally {
      c.kill();
    }
  });

  test("subscriptions/listen: acknowledged with the honored filter, then list_changed and resources/updated tagged with its id", async () => {
    using d = testStore();
    expect((await a2a(["publish", "watched", "v1"], { dir: d.path })).code).toBe(0);
    const c = new RawClient(d.path, { A2A_AGENT: "listener" });
    try {
      const mark = c.seen.length;
      c.send(JSON.stringify({ jsonrpc: "2.0", id: "listen-1", method: "subscriptions/listen", params: withMeta({ notifications: { toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ["a2a://slot/watched"] } }) }));
      const [ack] = await seen(c, mark, (m) => m.method === "notifications/subscriptions/acknowledged");
      // Tools never change in a session (listChanged false): that part is not honored.
      expect(ack.params).toEqual({ notifications: { resourcesListChanged: true, resourceSubscriptions: ["a2a://slot/watched"] }, _meta: { [SUB_KEY]: "listen-1" } });
      // The listen is a request left open: it has no answer while it lasts.
      expect(c.seen.some((m) => m.id === "listen-1")).toBe(false);
      // The ack comes once the watch and the list's baseline are in place: every change after
      // it is notified.
      const updated = (m: any) => m.method === "notifications/resources/updated" && m.params?.uri === "a2a://slot/watched";
      const changed = (m: any) => m.method === "notifications/resources/list_changed";
      expect((await a2a(["publish", "watched", "v2"], { dir: d.path })).code).toBe(0);
      const [up] = await seen(c, mark, updated);
      expect(up.params._meta[SUB_KEY]).toBe("listen-1");
      expect((await a2a(["publish", "appeared", "x"], { dir: d.path })).code).toBe(0);
      const [note] = await seen(c, mark, changed);
      expect(note.params._meta[SUB_KEY]).toBe("listen-1");
      // Cancelled, the listen ends unanswered, and the server serves on.
      c.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "listen-1" } }));
      expect((await c.request("tools/list", withMeta())).result).toBeDefined();
      expect(c.seen.some((m) => m.id === "listen-1")).toBe(false);

      // A URI a2a cannot watch is left out of the ack; a listen left with nothing ends at once.
      const from = c.seen.length;
      c.send(JSON.stringify({ jsonrpc: "2.0", id: "listen-2", method: "subscriptions/listen", params: withMeta({ notifications: { resourceSubscriptions: ["test://elsewhere"] } }) }));
      const [end] = await seen(c, from, (m) => m.id === "listen-2");
      expect(end.result).toMatchObject({ resultType: "complete", _meta: { [SUB_KEY]: "listen-2" } });
      expect(c.seen.slice(from).find((m) => m.method === "notifications/subscriptions/acknowledged").params.notifications).toEqual({});
      const many = Array.from({ length: 257 }, (_, i) => `a2a://slot/s${i}`);
      const tooMany = await c.request("subscriptions/listen", withMeta({ notifications: { resourceSubscriptions: many } }));
      expect(tooMany.error).toMatchObject({ code: -32602 });
      expect(tooMany.error.message).toContain("at most 256");
    } finally {
      c.kill();
    }
  });

  test("agent_wait under the revision: progress on its token, woken by a publish, and a cancel ends it unanswered", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "waiter", A2A_MCP_PROGRESS_MS: "100" });
    try {
      const mark = c.seen.length;
      const woken = c.request("tools/call", withMeta({ name: "agent_wait", arguments: { name: "late", timeout: 60 }, _meta: { progressToken: "p1" } }), 60_000);
      await seen(c, mark, (m) => m.method === "notifications/progress" && m.params?.progressToken === "p1");
      expect((await a2a(["publish", "late", "here"], { dir: d.path })).code).toBe(0);
      expect((await woken).result).toMatchObject({ resultType: "complete", structuredContent: { ok: true, result: "here" } });

      const from = c.seen.length;
      c.send(JSON.stringify({ jsonrpc: "2.0", id: 77, method: "tools/call", params: withMeta({ name: "agent_wait", arguments: { name: "never", timeout: 60 }, _meta: { progressToken: "p2" } }) }));
      await seen(c, from, (m) => m.method === "notifications/progress" && m.params?.progressToken === "p2");
      c.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 77, reason: "test" } }));
      // The server goes on serving, and the cancelled call was never answered.
      expect((await c.request("tools/list", withMeta())).result).toBeDefined();
      expect(c.seen.slice(from).some((m) => m.id === 77)).toBe(false);
    } finally {
      c.kill();
    }
  });
});

describe("a2a mcp that cannot work (a bad setting) under the revision", () => {
  test("discover answers, and a tool call gets the one-line error to relay", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_MCP_MAX_WAIT: "soon" });
    try {
      const discover = await c.request("server/discover", withMeta());
      expect(discover.result).toMatchObject({ supportedVersions: [REVISION], resultType: "complete" });
      expect(discover.result.instructions).toMatch(/^a2a cannot work here: A2A_MCP_MAX_WAIT="soon"/);
      const r = await c.request("tools/call", withMeta({ name: "agent_status", arguments: {} }));
      expect(r.result).toMatchObject({ isError: true, resultType: "complete" });
      expect(r.result.content[0].text).toMatch(/^a2a cannot work here: A2A_MCP_MAX_WAIT="soon" is not a positive number of seconds/);
    } finally {
      c.kill();
    }
  });
});

describe("the inbox push under the revision", () => {
  test("from the first request with the envelope, each message for the session is pushed as a channel notification", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "pushed" });
    try {
      expect((await c.request("tools/list", withMeta())).result).toBeDefined();
      const mark = c.seen.length;
      expect((await a2a(["send", "pushed", "hello from the shell", "--as", "shell"], { dir: d.path })).code).toBe(0);
      const [push] = await seen(c, mark, (m) => m.method === "notifications/claude/channel");
      expect(push.params.meta.from).toBe("shell");
      expect(push.params.content).toContain("hello from the shell");
    } finally {
      c.kill();
    }
  });
});

describe("beside the revision, a session opened by initialize is served as before", () => {
  test("2025-11-25: no resultType, no cache hints, ping answered, list_changed unsolicited", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "legacy" });
    try {
      expect((await c.initialize(15_000, "2025-11-25")).result.protocolVersion).toBe("2025-11-25");
      const list = await c.request("resources/list", {});
      expect(list.result.resultType).toBeUndefined();
      expect(list.result.ttlMs).toBeUndefined();
      expect((await c.request("ping")).result).toEqual({});
      const mark = c.seen.length;
      expect((await a2a(["publish", "fresh", "x"], { dir: d.path })).code).toBe(0);
      const [note] = await seen(c, mark, (m) => m.method === "notifications/resources/list_changed");
      expect(note.params?._meta?.[SUB_KEY]).toBeUndefined();
    } finally {
      c.kill();
    }
  });
  test("an initialize after requests with the envelope makes a session: its list changes go out unsolicited again", async () => {
    using d = testStore();
    const c = new RawClient(d.path, { A2A_AGENT: "both" });
    try {
      expect((await c.request("tools/list", withMeta())).result.resultType).toBe("complete");
      expect((await c.initialize(15_000, "2025-11-25")).result.protocolVersion).toBe("2025-11-25");
      expect((await c.request("resources/list", {})).result.resources).toEqual([]);
      const mark = c.seen.length;
      expect((await a2a(["publish", "fresh", "x"], { dir: d.path })).code).toBe(0);
      await seen(c, mark, (m) => m.method === "notifications/resources/list_changed");
    } finally {
      c.kill();
    }
  });
});
