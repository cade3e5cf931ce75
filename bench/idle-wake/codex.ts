// The idle-wake figure for Codex CLI (bench/idle-wake.ts): one interactive session attached to
// Codex's local app-server daemon (tests/e2e/fixtures/codex-tui.ts), prompted once by the user
// (the thread its wake names), then idle; each trial sends one message with `a2a send` and times
// until the Responses API stand-in receives the request whose user message is the wake. The
// stand-in has the session read its mail (check_messages).
import { available } from "../../tests/e2e/fixtures/codex";
import { untilTrue } from "../../tests/e2e/fixtures/claude-channel";
import { startCodex } from "../../tests/e2e/fixtures/codex-tui";
import { newText, standIn, toolOutputs } from "../../tests/e2e/fixtures/openai-responses";
import { a2a, BIN, childEnv, tempDir, testStore } from "../../tests/harness/run";

const GAP_MS = 2200; // the wake rule's one wake per 2 s per session, and a little

export async function measure(n: number): Promise<number[]> {
  const why = await available();
  if (why) throw new Error(why);
  using d = tempDir();
  using store = testStore();
  const woke: number[] = [];
  const api = standIn((r) => {
    if (newText(r).includes("[a2a wake]") && !toolOutputs(r).length) {
      woke.push(performance.now());
      return [{ tool: "mcp__a2a__check_messages", input: {} }];
    }
    return [{ text: "done" }];
  });
  const s = await startCodex(d.path, store.path, api.url);
  const idle = async () => {
    const r = await a2a(["wait-state", "proj", "idle", "--timeout", "90"], { dir: store.path });
    if (r.code !== 0) throw new Error(`wait-state idle: ${r.stderr}`);
  };
  const prompt = async (text: string) => {
    const before = api.requests.length;
    s.type(text);
    await s.screen.waitFor(new RegExp(text));
    s.type("\r");
    await untilTrue(() => api.requests.slice(before).some((r) => newText(r).includes(text)), "the user's prompt");
  };
  const out: number[] = [];
  try {
    await prompt("hi there"); // the thread the wake names
    for (let i = 0; i < n; i++) {
      if (i && i % 5 === 0) await prompt(`go on ${i}`); // the loop guard: the user prompts every 5 wakes
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
    await s.stop();
    api.close();
  }
  return out;
}
