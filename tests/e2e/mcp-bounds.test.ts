// What a client can make `a2a mcp` hold, against the compiled binary: a client that never
// reads its answers (a FIFO nobody reads) gets its further requests held, not answered into
// memory, and the server still exits when its stdin closes; a slow reader still gets every
// answer.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, exitWithin, tempDir } from "../harness/run";
import { INIT, INITIALIZED, toolCall, UnreadClient } from "../harness/mcp";

setDefaultTimeout(120_000);

const MiB = 1024 * 1024;
const BIG = "x".repeat(MiB); // the largest result the store takes (A2A_MAX_BYTES)
const PING = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" });

async function publishBig(store: string, name: string) {
  const r = await a2a(["publish", name, "-", "-q"], { dir: store, stdin: BIG });
  expect(r.code).toBe(0);
}

describe("a client that does not read its answers", () => {
  test("its requests wait unanswered, the server's memory stays bounded, and closing stdin still ends it", async () => {
    using d = tempDir();
    using f = tempDir("a2a-fifo-");
    await publishBig(d.path, "big");
    const n = 600; // each answer is the 1 MiB result twice: 1.2 GB if every one were built
    const c = new UnreadClient(d.path, f.path, { A2A_LOG: "1" });
    try {
      c.send(INIT, INITIALIZED, ...Array.from({ length: n }, (_, i) => toolCall(10 + i, "agent_wait", { name: "big" })));
      const served = (t: string) => t.match(/agent_wait -> ok/g)?.length ?? 0;
      await c.stderrUntil((t) => served(t) > 0);
      c.send(PING); // read after answers were written: the server looks at what it holds
      // Either the server says it holds the requests, or it has served every one of them.
      await c.stderrUntil((t) => /not reading its answers/.test(t) || served(t) >= n);
      const peak = c.memory("VmHWM");
      console.log(`server peak RSS with ${n} unread 1 MiB answers asked for: ${(peak / MiB).toFixed(0)} MiB; ${served(c.stderr)} served`);
      expect(peak).toBeLessThan(512 * MiB);
      expect(served(c.stderr)).toBeLessThan(n);
      // stdout is full and nothing reads it: the end of stdin still ends the server.
      c.proc.stdin.end();
      expect(await exitWithin(c.proc, 20_000)).toBe(0);
      expect(c.stderr).toMatch(/stopping: stdin closed/);
    } finally {
      c.close();
    }
  });

  test("a slow reader gets every answer, whole and in order of its requests, once it reads", async () => {
    using d = tempDir();
    using f = tempDir("a2a-fifo-");
    await publishBig(d.path, "big");
    const n = 40;
    const c = new UnreadClient(d.path, f.path, { A2A_LOG: "1" });
    try {
      c.send(INIT, INITIALIZED, ...Array.from({ length: n }, (_, i) => toolCall(10 + i, "agent_wait", { name: "big" })));
      await c.stderrUntil((t) => /agent_wait -> ok/.test(t));
      c.send(PING);
      await c.stderrUntil((t) => /not reading its answers/.test(t));
      const r = c.reader();
      await r.until((m) => m.id === 10 + n - 1);
      const answers = r.seen.filter((m) => typeof m.id === "number" && m.id >= 10);
      expect(answers.map((m) => m.id).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => 10 + i));
      for (const a of answers) expect(a.result.structuredContent).toMatchObject({ ok: true, name: "big", result: BIG });
      r.stop();
    } finally {
      c.close();
    }
  });
});
