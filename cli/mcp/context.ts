// What every tool of `a2a mcp` shares for the server's lifetime. There is exactly ONE Store
// per server, because lib/watch.ts keeps its directory watch in the Store: tens of
// concurrent agent_wait calls then share one inotify watch instead of opening one each.
//
// Settings read once at start-up (a bad value stops the server before it serves anything):
//   A2A_MCP_MAX_WAIT     seconds one call may block (default 100: Claude Code backgrounds a
//                        call after 120 s, and the SDK client times out at 60 s unless
//                        progress resets it)
//   A2A_MCP_PROGRESS_MS  interval of progress notifications during a wait (default 10000)
//   A2A_AGENT            the default sender of agent_send
//   A2A_LOG              any non-empty value: one log line per call on stderr

import { A2AError } from "../../lib/core/errors";
import type { Store } from "../../lib/core/config";
import { err } from "../io";

export interface McpCtx {
  store: Store;
  env: Record<string, string | undefined>;
  maxWaitSec: number;
  progressMs: number;
  shutdown: AbortSignal; // aborted when the server stops: every wait returns at once
  unreadNote: () => string; // the messaging note for every result; set once peers are registered
  agentName?: string; // the last name given to agent_start here: agent_send's default sender
  log: (line: string) => void;
}

function positive(env: Record<string, string | undefined>, key: string, dflt: number, unit: string): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new A2AError("EUSAGE", `${key}=${JSON.stringify(raw)} is not a positive number of ${unit}: set it to e.g. ${dflt} or unset it`);
  }
  return n;
}

export function makeCtx(store: Store, env: Record<string, string | undefined>, shutdown: AbortSignal): McpCtx {
  const logging = !!env.A2A_LOG;
  return {
    store,
    env,
    maxWaitSec: positive(env, "A2A_MCP_MAX_WAIT", 100, "seconds"),
    progressMs: positive(env, "A2A_MCP_PROGRESS_MS", 10_000, "milliseconds"),
    shutdown,
    unreadNote: () => "",
    log: logging ? (line) => err(`a2a mcp: ${line}\n`) : () => {},
  };
}
