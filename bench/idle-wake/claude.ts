// The idle-wake figure for Claude Code (bench/idle-wake.ts): one interactive session with a2a's
// channel on (tests/e2e/fixtures/claude-channel.ts), idle at its prompt; each trial sends one
// message with `a2a send` and times until the Messages API stand-in receives the request whose
// channel event carries the wake. The stand-in has the session read its mail (check_messages).
import { available } from "../../tests/e2e/fixtures/claude";
import { sandbox, startClaude, untilTrue } from "../../tests/e2e/fixtures/claude-channel";
import { newText, standIn, toolResults } from "../../tests/e2e/fixtures/messages-api";
import { a2a, BIN, childEnv, tempDir, testStore } from "../../tests/harness/run";

const GAP_MS = 2200; // the wake rule's one wake per 2 s per session, and a little

export async function measure(n: number): Promise<number[]> {
  const why = await available();
  if (why) throw new Error(why);
  using d = tempDir();
  using store = testStore();
  const { home, proj } = await sandbox(d.path, store.path);
  const woke: number[] = []; // when each wake's request came (performance.now)
  const api = standIn((r) => {
    if (!(r.body.tools ?? []).some((t: any) => t.name === "Bash")) return [{ text: "ok" }];
    if (newText(r).includes("[a2a wake]") && !toolResults(r).length) {
      woke.push(performance.now());
      return [{ tool: "mcp__a2a__check_messages", input: {} }];
    }
    return [{ text: "done" }];
  });
  const s = await startClaude({ home, proj, store: store.path, apiUrl: api.url });
  const idle = async () => {
    const r = await a2a(["wait-state", "proj", "idle", "--timeout", "90"], { dir: store.path });
    if (r.code !== 0) throw new Error(`wait-state idle: ${r.stderr}`);
  };
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      if (i && i % 5 === 0) {
        // The loop guard allows 5 wakes with no user prompt between: the user prompts.
        const before = api.requests.length;
        s.type("go on\r");
        await untilTrue(() => api.requests.slice(before).some((r) => newText(r).includes("go on")), "the user's prompt");
      }
      await idle();
      await Bun.sleep(GAP_MS);
      const seen = woke.length;
      const t0 = performance.now();
      const p = Bun.spawn({ cmd: [BIN, "send", "proj", `trial ${i}`, "--as", "bench"], env: childEnv({ dir: store.path }), stdout: "ignore", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`a2a send: ${await new Response(p.stderr).text()}`);
      await untilTrue(() => woke.length > seen, `the wake of trial ${i}`);
      out.push(woke[seen] - t0);
    }
    await idle();
  } finally {
    await s.kill();
    api.close();
  }
  return out;
}
