// The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency: run
// from node_modules, no network) against `a2a mcp`, its server scenarios under the 2025-11-25
// requirements (issue 37, "The suite in CI"). The suite speaks Streamable HTTP and a2a only
// stdio, so tests/harness/mcp-http.ts stands between them, one `a2a mcp` per session.
// fixtures/conformance-expected.json names the scenarios that need what only the reference
// server has (its test_* tools, test:// resources and prompts), each with why: any other
// scenario that fails fails this test, and so does a listed one that passes (take it off).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startBridge } from "../harness/mcp-http";
import { ROOT, tempDir, testStore } from "../harness/run";

setDefaultTimeout(300_000);

const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const EXPECTED: Record<string, Record<string, string>> = JSON.parse(readFileSync(join(import.meta.dir, "fixtures", "conformance-expected.json"), "utf8"));

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

// Runs the suite's server scenarios for `version` against `url`: each scenario's checks, by name.
async function runSuite(url: string, version: string): Promise<{ scenarios: Map<string, Check[]>; output: string }> {
  using out = tempDir("a2a-conformance-");
  const p = Bun.spawn({
    cmd: [process.execPath, SUITE, "server", "--url", url, "--spec-version", version, "-o", out.path],
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
  test("2025-11-25: every server scenario passes but those needing the reference server's fixtures", async () => {
    // One store for every session: no scenario writes to it, and a schema per session would
    // make the run on PostgreSQL several times longer.
    using store = testStore();
    const bridge = startBridge({ store: () => store.path, env: { A2A_AGENT: "conformance" } });
    let run: Awaited<ReturnType<typeof runSuite>>;
    try {
      run = await runSuite(bridge.url, "2025-11-25");
    } finally {
      await bridge.stop();
    }
    const expected = EXPECTED["2025-11-25"]!;
    const failed = (checks: Check[]) => checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`);
    const unexpected: string[] = [];
    const nowPassing: string[] = [];
    for (const [name, checks] of run.scenarios) {
      const failures = failed(checks);
      if (failures.length > 0 && !(name in expected)) unexpected.push(`${name} (${failures.join("; ")})`);
      if (failures.length === 0 && name in expected) nowPassing.push(name);
    }
    const missing = Object.keys(expected).filter((name) => !run.scenarios.has(name));
    expect({ unexpected, nowPassing, missing }).toEqual({ unexpected: [], nowPassing: [], missing: [] });
    // Not vacuous: the scenarios a2a can pass ran and passed a check each.
    const passed = [...run.scenarios].filter(([name, checks]) => !(name in expected) && checks.some((c) => c.status === "SUCCESS")).map(([name]) => name);
    expect(passed.length, run.output.slice(-2000)).toBeGreaterThanOrEqual(6);
    expect(passed).toEqual(expect.arrayContaining(["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"]));
  });
});
