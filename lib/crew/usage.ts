// What a coding agent's run cost, as the agent itself reports it on stdout in the JSON events of
// its headless mode (issue 36): tokens in and out, and the cost in US dollars where the agent
// gives one. Nothing is estimated: an agent that reports nothing leaves the attempt's usage
// unknown (null), never zero. Formats, as of the versions a2a is tested with:
//   claude -p --output-format stream-json (2.1): the last {"type":"result"} holds the run's totals,
//     usage {input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens}
//     and total_cost_usd;
//   codex exec --json (0.171): one {"type":"turn.completed", usage {input_tokens (cached ones
//     among them), output_tokens}} per turn, summed;
//   gemini -p -o stream-json (0.61): the last {"type":"result", stats {input_tokens, output_tokens}};
//   opencode run --format json (1.18): one {"type":"step_finish", part {tokens {input, output,
//     reasoning, cache {read, write}}, cost}} per step, summed;
//   qwen -p -o stream-json (0.24): the last {"type":"result", usage {input_tokens (cached ones
//     among them), output_tokens}};
//   copilot --output-format json (1.0.102): no token count in its events (premium requests only):
//     a Copilot CLI worker's usage stays unknown.

export interface Usage {
  input: number; // tokens read, cached ones among them
  output: number; // tokens written, reasoning among them
  cost: number | null; // US dollars, where the agent says
}

// What an agent's stream says is not trusted (a broken CLI, a proxy, a model's own output): a
// count of tokens is a whole number, a cost a finite one, neither negative; anything else is no
// count (0 tokens) or an unknown cost (null), never a figure that would lower, or overflow, a total.
const n = (v: unknown) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);
const usd = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

// One event's usage, and whether it replaces what was counted so far (a run's totals) or adds to it.
function eventUsage(agent: string, e: any): { u: Usage; total: boolean } | undefined {
  if (!e || typeof e !== "object") return undefined;
  if (agent === "claude" && e.type === "result" && e.usage) {
    const u = e.usage;
    return { u: { input: n(u.input_tokens) + n(u.cache_creation_input_tokens) + n(u.cache_read_input_tokens), output: n(u.output_tokens), cost: usd(e.total_cost_usd) }, total: true };
  }
  if (agent === "codex" && e.type === "turn.completed" && e.usage) return { u: { input: n(e.usage.input_tokens), output: n(e.usage.output_tokens), cost: null }, total: false };
  if (agent === "gemini" && e.type === "result" && e.stats) return { u: { input: n(e.stats.input_tokens), output: n(e.stats.output_tokens), cost: null }, total: true };
  if (agent === "qwen" && e.type === "result" && e.usage) return { u: { input: n(e.usage.input_tokens), output: n(e.usage.output_tokens), cost: null }, total: true };
  if (agent === "opencode" && e.type === "step_finish" && e.part?.tokens) {
    const t = e.part.tokens;
    return { u: { input: n(t.input) + n(t.cache?.read) + n(t.cache?.write), output: n(t.output) + n(t.reasoning), cost: usd(e.part.cost) }, total: false };
  }
  return undefined;
}

export const addUsage = (a: Usage | null, b: Usage | null): Usage | null =>
  !a ? b : !b ? a : { input: a.input + b.input, output: a.output + b.output, cost: a.cost === null && b.cost === null ? null : (a.cost ?? 0) + (b.cost ?? 0) };

// Reads an agent's stdout as it comes (chunks split anywhere) and keeps its usage so far.
export function usageMeter(agent: string): { feed(chunk: string): void; read(): Usage | null } {
  let partial = "";
  let usage: Usage | null = null;
  const line = (l: string) => {
    if (!l.startsWith("{") || !l.includes("token")) return; // cheap: most lines are other events
    let e: unknown;
    try {
      e = JSON.parse(l);
    } catch {
      return;
    }
    const got = eventUsage(agent, e);
    if (got) usage = got.total ? got.u : addUsage(usage, got.u);
  };
  return {
    feed(chunk) {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      // One line of over a MiB is no event of these: it is dropped rather than kept growing.
      if (partial.length > 1 << 20) partial = "";
      for (const l of lines) line(l.trim());
    },
    read() {
      if (partial) line(partial.trim());
      partial = "";
      return usage;
    },
  };
}

// "1234 tokens in, 56 out, $0.0123" (the cost where known).
export const usageText = (u: Usage): string => `${u.input} tokens in, ${u.output} out${u.cost === null ? "" : `, $${u.cost.toFixed(4)}`}`;
