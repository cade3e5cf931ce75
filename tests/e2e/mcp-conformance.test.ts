// The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency: run
// from node_modules, no network) against `a2a mcp`, its server scenarios under the 2025-11-25
// and the 2026-07-28 requirements (issue 37, "The suite in CI"). The suite speaks Streamable
// HTTP and a2a only stdio, so tests/harness/mcp-http.ts stands between them: one `a2a mcp` per
// session, and per request under 2026-07-28, which has no sessions.
// fixtures/conformance-expected.json names the scenarios that need what only the reference
// server has (its test_* tools, test:// resources, prompts, the tasks extension's tools), each
// with why; where a scenario also checks what a2a has, only its checks that need the fixtures
// are named ({"checks": {...}}). Any other failure fails this test, and so does a listed
// scenario or check that passes (take it off).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startBridge } from "../harness/mcp-http";
import { a2a, ROOT, tempDir, testStore } from "../harness/run";

setDefaultTimeout(300_000);

const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
type Expected = string | { checks: Record<string, string> };
const EXPECTED: Record<string, Record<string, Expected>> = JSON.parse(readFileSync(join(import.meta.dir, "fixtures", "conformance-expected.json"), "utf8"));

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

// Runs the suite's server scenarios for `version` against `url`: each scenario's checks, by name.
async function runSuite(url: string, version: string): Promise<{ scenarios: Map<string, Check[]>; output: string }> {
  using out = tempDir("a2a-conformance-");
  const p = Bun.spawn({
    cmd: [process.execPath, SUITE, "server", "--url", url, "--requirements", version, "-o", out.path],
    cwd: out.path,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // A bound on the whole run (it takes seconds), so a hung scenario fails the test instead of CI.
  const limit = setTimeout(() => p.kill(), 240_000);
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(limit);
  const scenarios = new Map<string, Check[]>();
  for (const dir of readdirSync(out.path)) {
    const file = join(out.path, dir, "checks.json");
    // server-<scenario>-<ISO time with - for :>
    const name = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
    if (existsSync(file)) scenarios.set(name, JSON.parse(readFileSync(file, "utf8")));
  }
  return { scenarios, output: stdout + stderr };
}

describe("the official MCP conformance suite, through an HTTP bridge", () => {
  // [version, scenarios a2a passes that must be among those run]
  const runs: [string, string[]][] = [
    ["2025-11-25", ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"]],
    ["2026-07-28", ["server-stateless", "tools-list", "resources-list", "http-header-validation", "sep-2164-resource-not-found", "caching", "dns-rebinding-protection"]],
  ];
  for (const [version, mustPass] of runs) {
    test(`${version}: every server scenario passes but those needing the reference server's fixtures`, async () => {
      // One store for every session: no scenario writes to it, and a schema per session would
      // make the run on PostgreSQL several times longer.
      using store = testStore();
      const bridge = startBridge({ store: () => store.path, env: { A2A_AGENT: "conformance" } });
      let run: Awaited<ReturnType<typeof runSuite>>;
      try {
        run = await runSuite(bridge.url, version);
      } finally {
        await bridge.stop();
      }
      const expected = EXPECTED[version]!;
      const unexpected: string[] = [];
      const nowPassing: string[] = [];
      for (const [name, checks] of run.scenarios) {
        const failures = checks.filter((c) => c.status === "FAILURE");
        const e = expected[name];
        const allowed = (id: string) => e !== undefined && (typeof e === "string" || id in e.checks);
        for (const c of failures) if (!allowed(c.id)) unexpected.push(`${name} (${c.id}: ${c.errorMessage ?? "failed"})`);
        if (typeof e === "string" && failures.length === 0) nowPassing.push(name);
        if (typeof e === "object") for (const id of Object.keys(e.checks)) if (!failures.some((c) => c.id === id)) nowPassing.push(`${name}: ${id}`);
      }
      const missing = Object.keys(expected).filter((name) => !run.scenarios.has(name));
      expect({ unexpected, nowPassing, missing }).toEqual({ unexpected: [], nowPassing: [], missing: [] });
      // Not vacuous: the scenarios a2a can pass ran and passed a check each.
      const passed = [...run.scenarios].filter(([name, checks]) => typeof expected[name] !== "string" && checks.some((c) => c.status === "SUCCESS")).map(([name]) => name);
      expect(passed.length, run.output.slice(-2000)).toBeGreaterThanOrEqual(mustPass.length);
      expect(passed).toEqual(expect.arrayContaining(mustPass));
    });
  }
});

// What no conformance scenario makes a2a send, the bridge must still carry, or the run above
// would say nothing of a2a's own notifications: progress on the stream of the call it belongs
// to, list_changed on the newest open stream, and on the GET stream once no call is open.
describe("the HTTP bridge", () => {
  test("relays a2a's notifications: progress during agent_wait, resources/list_changed during a call and between calls", async () => {
    using store = testStore();
    const bridge = startBridge({ store: () => store.path, env: { A2A_AGENT: "bridged", A2A_MCP_PROGRESS_MS: "100" }, args: ["--tools", "slots"] });
    const client = new Client({ name: "a2a-bridge-test", version: "1.0.0" });
    let changes = 0;
    let onChange = () => {};
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes++;
      onChange();
    });
    const changed = (limitMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const seen = changes;
        const timer = setTimeout(() => reject(new Error(`no resources/list_changed within ${limitMs} ms`)), limitMs);
        onChange = () => changes > seen && (clearTimeout(timer), resolve());
      });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(bridge.url)));
      expect((await client.listResources()).resources).toEqual([]);
      let progressed!: () => void;
      const gotProgress = new Promise<void>((r) => (progressed = r));
      const progress: number[] = [];
      const waiting = client.callTool({ name: "agent_wait", arguments: { name: "slow", timeout: 60 } }, undefined, {
        timeout: 60_000,
        onprogress: (p) => {
          progress.push(p.progress);
          progressed();
        },
      });
      await gotProgress;
      let next = changed();
      expect((await a2a(["publish", "slow", "done"], { dir: store.path })).code).toBe(0);
      await next;
      expect((await waiting).structuredContent).toMatchObject({ ok: true, result: "done" });
      expect(progress.length).toBeGreaterThan(0);
      // No call open now: the next change can only come on the GET stream.
      expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["slow"]);
      next = changed();
      expect((await a2a(["publish", "later", "x"], { dir: store.path })).code).toBe(0);
      await next;
      expect((await client.listResources()).resources.map((r) => r.name).sort()).toEqual(["later", "slow"]);
    } finally {
      await client.close();
      await bridge.stop();
    }
  });
});
