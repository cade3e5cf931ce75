// What every tool of `a2a mcp` shares for the server's lifetime. There is exactly ONE Store
// per server, because lib/core/watch.ts keeps its directory watch in the Store: tens of
// concurrent agent_wait calls then share one inotify watch instead of opening one each.
// The settings (A2A_MCP_MAX_WAIT, A2A_MCP_PROGRESS_MS, A2A_LOG, A2A_AGENT) are the Store's,
// read once by lib/core/config.ts: a bad value stops the server before it serves anything.

import type { Store } from "../../lib/core/config";
import { err } from "../io";

export interface McpCtx {
  store: Store;
  maxWaitSec: number; // one call blocks at most this long, then answers still_waiting
  progressMs: number;
  shutdown: AbortSignal; // aborted when the server stops: every wait returns at once
  unreadNote: () => string; // the messaging note for every result; set once peers are registered
  agentName?: string; // the last name given to agent_start here: agent_send's default sender
  log: (line: string) => void;
}

export function makeCtx(store: Store, shutdown: AbortSignal): McpCtx {
  return {
    store,
    maxWaitSec: store.maxWaitSec,
    progressMs: store.progressMs,
    shutdown,
    unreadNote: () => "",
    log: store.log ? (line) => err(`a2a mcp: ${line}\n`) : () => {},
  };
}
