// What every tool of `a2a mcp` shares for the server's lifetime. There is exactly ONE Bus per
// server (lib/bus.ts), because the store it holds keeps the file engine's directory watch:
// tens of concurrent agent_wait calls then share one inotify watch instead of opening one each.
// The settings (A2A_MCP_MAX_WAIT, A2A_MCP_PROGRESS_MS, A2A_LOG, A2A_AGENT) are the bus's,
// read once by lib/core/config.ts: a bad value stops the server before it serves anything.
// The session (identity, inbox, unread count) is built before the tools, so every tool group
// gets it here; `deliveries` tells when an answer has been written to the client.

import type { Bus } from "../../lib/bus";
import { err } from "../io";
import type { Deliveries } from "./delivery";
import type { Session } from "./session";

export interface McpCtx {
  bus: Bus;
  session: Session;
  deliveries: Deliveries;
  maxWaitSec: number; // one call blocks at most this long, then answers still_waiting
  progressMs: number;
  shutdown: AbortSignal; // aborted when the server stops: every wait returns at once
  log: (line: string) => void;
  // Something a client is owed and did not get (a progress read, a watch, a push that failed):
  // the A2A_LOG line, and once the server is up a notifications/message at level warning.
  warn: (line: string) => void;
  tools: Set<string>; // the tools offered (toolsets.ts): results name only those
}

export function makeCtx(bus: Bus, session: Session, deliveries: Deliveries, shutdown: AbortSignal, tools: Set<string>): McpCtx {
  const log = bus.settings.log ? (line: string) => err(`a2a mcp: ${line}\n`) : () => {};
  return {
    bus,
    session,
    deliveries,
    maxWaitSec: bus.settings.maxWaitSec,
    progressMs: bus.settings.progressMs,
    shutdown,
    log,
    warn: log,
    tools,
  };
}
