// The TypeScript SDK's v2 client (@modelcontextprotocol/client 2.4.0) against `a2a mcp` over
// stdio, under revision 2026-07-28 (pinned, and negotiated by its server/discover probe) and
// under the 2025 handshake it falls back to (issue 37: clients under both revisions). The v1
// client (tests/harness/mcp.ts connect) covers the 2025 versions everywhere else.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { BIN, a2a, childEnv, testStore } from "../harness/run";

setDefaultTimeout(60_000);

type Mode = "legacy" | "auto" | { pin: string };

async function connectV2(dir: string, mode: Mode, env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "a2a-v2-test", version: "2.4.0" }, { versionNegotiation: { mode } });
  await client.connect(new StdioClientTransport({ command: BIN, args: ["mcp"], env: childEnv({ dir, env: { A2A_AGENT: "v2", ...env } }), stderr: "ignore" }));
  return client;
}

// Everything a session does, whatever the revision: list, call with a structured result
// (checked by the client against the tool's outputSchema), and a wait woken by a publish.
async function works(client: Client, dir: string): Promise<void> {
  const tools = (await client.listTools()).tools;
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["agent_publish", "agent_wait"]));
  expect(tools.find((t) => t.name === "agent_publish")?.outputSchema).toBeDefined();
  const pub = await client.callTool({ name: "agent_publish", arguments: { name: "first", result: "one" } });
  expect(pub.isError).toBeFalsy();
  expect(pub.structuredContent).toMatchObject({ ok: true, name: "first" });

  let progressed!: () => void;
  const gotProgress = new Promise<void>((r) => (progressed = r));
  const waiting = client.callTool({ name: "agent_wait", arguments: { name: "later", timeout: 60 } }, { timeout: 60_000, onprogress: () => progressed() });
  await gotProgress; // the wait is under way
  expect((await a2a(["publish", "later", "two"], { dir })).code).toBe(0);
  expect((await waiting).structuredContent).toMatchObject({ ok: true, result: "two" });
}

describe("the v2 client under revision 2026-07-28", () => {
  test("pinned: no initialize, lists, calls, waits and is woken", async () => {
    using d = testStore();
    const client = await connectV2(d.path, { pin: "2026-07-28" }, { A2A_MCP_PROGRESS_MS: "100" });
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getDiscoverResult()?.supportedVersions).toEqual(["2026-07-28"]);
      expect(client.getInstructions()).toContain("a2a");
      await works(client, d.path);
    } finally {
      await client.close();
    }
  });

  test("auto: its server/discover probe finds the revision", async () => {
    using d = testStore();
    const client = await connectV2(d.path, "auto");
    try {
      expect(client.getProtocolEra()).toBe("modern");
      const r = await client.callTool({ name: "whoami", arguments: {} });
      expect(r.structuredContent).toMatchObject({ name: "v2" });
    } finally {
      await client.close();
    }
  });

  test("listen: resource list changes and a subscribed slot's updates reach the client", async () => {
    using d = testStore();
    expect((await a2a(["publish", "watched", "v1"], { dir: d.path })).code).toBe(0);
    const client = await connectV2(d.path, { pin: "2026-07-28" });
    try {
      const events: string[] = [];
      let seen = () => {};
      const note = (what: string) => () => {
        events.push(what);
        seen();
      };
      client.setNotificationHandler("notifications/resources/list_changed", note("list_changed"));
      client.setNotificationHandler("notifications/resources/updated", note("updated"));
      const sub = await client.listen({ resourcesListChanged: true, resourceSubscriptions: ["a2a://slot/watched"] });
      expect(sub.honoredFilter).toEqual({ resourcesListChanged: true, resourceSubscriptions: ["a2a://slot/watched"] });
      const both = new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${JSON.stringify(events)} within 30 s`)), 30_000);
        seen = () => events.includes("list_changed") && events.includes("updated") && (clearTimeout(t), resolve());
      });
      expect((await a2a(["publish", "watched", "v2"], { dir: d.path })).code).toBe(0);
      expect((await a2a(["publish", "appeared", "x"], { dir: d.path })).code).toBe(0);
      await both;
      await sub.close();
      expect(await sub.closed).toBe("local");
    } finally {
      await client.close();
    }
  });
});

describe("the v2 client under the 2025 handshake", () => {
  test("legacy mode: initialize, then the same session as before", async () => {
    using d = testStore();
    const client = await connectV2(d.path, "legacy", { A2A_MCP_PROGRESS_MS: "100" });
    try {
      expect(client.getProtocolEra()).toBe("legacy");
      expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      await works(client, d.path);
    } finally {
      await client.close();
    }
  });
});
