// The official Python MCP SDK (mcp 2.3.0) as a client of `a2a mcp` over stdio, under revision
// 2026-07-28 (its default "auto" mode probes server/discover and adopts it) and under the
// initialize handshake ("legacy"): connect, list, a structured result, a wait woken by a
// publish (issue 37). PyPI is not reached: pip installs mcp from the indexes this machine's pip
// is configured with (a local mirror here), into a venv in the test's temp dir.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BIN, a2a, childEnv, tempDir, testStore } from "../harness/run";

setDefaultTimeout(180_000);

const SCRIPT = join(import.meta.dir, "fixtures", "py-mcp-client.py");

// A venv with the SDK; fails naming what to do when pip cannot get it.
async function python(dir: string): Promise<string> {
  const venv = join(dir, "venv");
  const run = async (cmd: string[]) => {
    const p = Bun.spawn({ cmd, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} failed (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}: the test needs python3 with venv, and pip able to install mcp==2.3.0`);
  };
  await run(["python3", "-m", "venv", venv]);
  // No retries of an index that cannot be reached: the configured local ones answer.
  await run([join(venv, "bin", "pip"), "install", "--quiet", "--retries", "0", "--timeout", "10", "mcp==2.3.0"]);
  return join(venv, "bin", "python");
}

// Runs the client script in `mode`; publishes what it waits for once it says it is waiting.
async function session(py: string, store: string, mode: string): Promise<Record<string, any>> {
  const p = Bun.spawn({
    cmd: [py, SCRIPT, BIN, mode],
    env: childEnv({ dir: store, env: { A2A_AGENT: "py", A2A_MCP_PROGRESS_MS: "100" } }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const limit = setTimeout(() => p.kill(), 120_000);
  const steps: Record<string, any> = {};
  const stderr = new Response(p.stderr).text();
  let buf = "";
  for await (const chunk of p.stdout) {
    buf += new TextDecoder().decode(chunk);
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const step = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      steps[step.step] = step;
      if (step.step === "waiting") expect((await a2a(["publish", "for-py", "from the shell"], { dir: store })).code).toBe(0);
    }
  }
  clearTimeout(limit);
  expect(await p.exited, await stderr).toBe(0);
  return steps;
}

describe("the Python SDK's client (mcp 2.3.0)", () => {
  // One venv for both cases, removed when they are done.
  const venvDir = tempDir("a2a-python-mcp-");
  afterAll(() => venvDir[Symbol.dispose]());
  let py: Promise<string> | undefined;
  const cases: [string, string][] = [
    ["auto", "2026-07-28"],
    ["legacy", "2025-11-25"],
  ];
  for (const [mode, version] of cases) {
    test(`${mode}: speaks ${version}, lists, calls, waits and is woken`, async () => {
      using store = testStore();
      const steps = await session(await (py ??= python(venvDir.path)), store.path, mode);
      expect(steps.connected).toMatchObject({ version, server: "a2a" });
      expect(steps.listed.tools).toEqual(expect.arrayContaining(["agent_publish", "agent_wait", "check_messages"]));
      expect(steps.listed.output_schema).toBe(true);
      expect(steps.published).toMatchObject({ error: false, structured: { ok: true, name: "py" } });
      expect(steps.woken).toMatchObject({ error: false, structured: { ok: true, name: "for-py", result: "from the shell" } });
    });
  }
});
