// Which tools `a2a mcp` offers: `--tools LIST`, a comma-separated list of sets and tool names.
// Every tool of the server belongs to exactly one set; tools/list holds the selected ones only,
// so a session pays (in context) for what it uses. The drop-in names stay one word away:
// `--tools agent2agent` is agent2agent 0.2.0's seven tools, `--tools claude-peers`
// claude-peers-mcp's four, `--tools all` everything.
//
// Invariant: SETS names every tool the groups in tools/ register, once (tests/e2e/tool-sets
// checks `--tools all` against it).

import { A2AError } from "../../lib/core/errors";

export const SETS = {
  slots: ["agent_start", "agent_publish", "agent_wait", "agent_wait_all", "agent_status", "agent_clear"],
  stream: ["agent_append", "agent_tail"], // partial output of a running slot
  mail: ["send_message", "check_messages", "reply", "ack_messages", "read_thread"],
  peers: ["whoami", "list_peers", "set_summary"],
  topics: ["publish_topic", "read_topic", "agent_send", "agent_recv"],
  tasks: ["task_add", "task_claim", "task_renew", "task_done", "task_fail", "task_wait", "task_list", "task_show", "task_retry", "task_cancel"],
  leases: ["lease_take", "lease_renew", "lease_release", "lease_list"], // reservations of names (files, areas)
  files: ["reserve_files", "release_files", "list_reservations"], // reservations of paths of the repository
  search: ["search"], // what agents wrote, found again (--tools default,search)
} as const satisfies Record<string, readonly string[]>;

export type SetName = keyof typeof SETS;
export const ALL_TOOLS: string[] = Object.values(SETS).flat();

export const ALIASES: Record<string, string[]> = {
  default: ["slots", "mail", "peers"], // a work-queue session adds tasks: --tools default,tasks
  all: Object.keys(SETS),
  agent2agent: ["agent_start", "agent_publish", "agent_wait", "agent_status", "agent_clear", "agent_send", "agent_recv"],
  "claude-peers": ["list_peers", "set_summary", "send_message", "check_messages"],
};

export const DEFAULT_TOOLS = "default";

// What a tool list may cost, in bytes as JSON (about 4 bytes a token). MODEL_BUDGET: what a model
// is shown of each tool (name, description, input schema: all the Anthropic, OpenAI and Gemini
// tool definitions carry), which every session that loads a2a holds in its context. LIST_BUDGET:
// the whole of tools/list, output schemas included (outputs.ts: 8.1 KB of the default set's
// 14.4 KB), which a client reads to check results and no model API takes. tests/e2e/
// tool-budget.test.ts fails on a set that grows past either; bench/mcp.ts prints both.
export const MODEL_BUDGET: Record<string, number> = { default: 6144, agent2agent: 5120, "claude-peers": 2048, all: 30720 };
export const LIST_BUDGET: Record<string, number> = { default: 15360, agent2agent: 8192, "claude-peers": 4608, all: 49152 };

// A tool as a model is shown it (what the model APIs' tool definitions hold).
export const modelView = (t: { name: string; description?: string; inputSchema: unknown }) => ({ name: t.name, description: t.description, input_schema: t.inputSchema });

// The tool names a --tools value selects, in ALL_TOOLS order.
export function selectTools(spec: string | undefined): Set<string> {
  const want = new Set<string>();
  const add = (word: string, depth = 0): void => {
    if (Object.hasOwn(SETS, word)) SETS[word as SetName].forEach((t) => want.add(t));
    else if (Object.hasOwn(ALIASES, word) && depth < 2) ALIASES[word].forEach((w) => add(w, depth + 1));
    else if (ALL_TOOLS.includes(word)) want.add(word);
    else {
      const known = [...Object.keys(SETS), ...Object.keys(ALIASES)].join(", ");
      throw new A2AError("EUSAGE", `unknown tool set or tool ${JSON.stringify(word)} in --tools: use sets (${known}) or tool names, comma-separated, e.g. --tools default,topics`);
    }
  };
  const words = (spec ?? DEFAULT_TOOLS).split(",").map((w) => w.trim()).filter(Boolean);
  if (!words.length) throw new A2AError("EUSAGE", "--tools is empty: name at least one set, e.g. --tools default");
  words.forEach((w) => add(w));
  return new Set(ALL_TOOLS.filter((t) => want.has(t)));
}
