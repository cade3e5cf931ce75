// An agent's tokens and cost read from its headless JSON events (lib/crew/usage.ts), in each
// agent's format, the stream cut anywhere (a pipe's chunks split lines); other lines ignored.
import { describe, expect, test } from "bun:test";
import { addUsage, usageMeter } from "../../lib/crew/usage";

const feedSplit = (agent: string, events: object[], junk = "not json {\n") => {
  const text = junk + events.map((e) => JSON.stringify(e)).join("\n") + "\n";
  const m = usageMeter(agent);
  for (let i = 0; i < text.length; i += 7) m.feed(text.slice(i, i + 7));
  return m.read();
};

describe("crew usage: each agent's own report", () => {
  test("claude: the last result's totals, cache tokens counted in, and its cost", () => {
    expect(feedSplit("claude", [
      { type: "assistant", message: { usage: { input_tokens: 9, output_tokens: 9 } } },
      { type: "result", usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 2, output_tokens: 3 }, total_cost_usd: 0.25 },
    ])).toEqual({ input: 17, output: 3, cost: 0.25 });
  });
  test("codex: each turn.completed added, no cost", () => {
    expect(feedSplit("codex", [
      { type: "turn.completed", usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 7 } },
      { type: "item.completed", item: { type: "agent_message", text: "tokens" } },
      { type: "turn.completed", usage: { input_tokens: 50, cached_input_tokens: 0, output_tokens: 3 } },
    ])).toEqual({ input: 150, output: 10, cost: null });
  });
  test("gemini: the result's stats", () => {
    expect(feedSplit("gemini", [{ type: "result", status: "success", stats: { total_tokens: 42, input_tokens: 30, output_tokens: 12, cached: 0 } }])).toEqual({ input: 30, output: 12, cost: null });
  });
  test("opencode: each step_finish added, reasoning and cache counted in, costs summed", () => {
    expect(feedSplit("opencode", [
      { type: "step_finish", part: { type: "step-finish", tokens: { input: 10, output: 2, reasoning: 1, cache: { read: 4, write: 1 } }, cost: 0.5 } },
      { type: "step_finish", part: { type: "step-finish", tokens: { input: 5, output: 1, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0.25 } },
    ])).toEqual({ input: 20, output: 4, cost: 0.75 });
  });
  test("qwen: the last result's usage (its assistant messages' own ignored), no cost", () => {
    expect(feedSplit("qwen", [
      { type: "assistant", message: { usage: { input_tokens: 9, output_tokens: 9 } } },
      { type: "result", subtype: "success", usage: { input_tokens: 2468, output_tokens: 112, cache_read_input_tokens: 0, total_tokens: 2580 } },
    ])).toEqual({ input: 2468, output: 112, cost: null });
  });
  test("copilot: its result carries no token count (premium requests only): unknown", () => {
    expect(feedSplit("copilot", [{ type: "assistant.message", data: { content: "tokens" } }, { type: "result", exitCode: 0, usage: { premiumRequests: 0, totalApiDurationMs: 18, sessionDurationMs: 232 } }])).toBeNull();
  });
  test("nothing reported is unknown (null), not zero; a last line without its newline is read", () => {
    expect(feedSplit("claude", [{ type: "assistant" }])).toBeNull();
    const m = usageMeter("gemini");
    m.feed(JSON.stringify({ type: "result", stats: { input_tokens: 1, output_tokens: 2 } }));
    expect(m.read()).toEqual({ input: 1, output: 2, cost: null });
    expect(addUsage({ input: 1, output: 1, cost: null }, { input: 2, output: 2, cost: 0.5 })).toEqual({ input: 3, output: 3, cost: 0.5 });
  });
});
