// The coding agents a2a sets up, checks and speaks hooks with, by id (`a2a setup ID`), in the
// order doctor lists them (most used first).

import type { Agent } from "./agent";
import { claude } from "./claude";
import { codex } from "./codex";
import { gemini } from "./gemini";
import { opencode } from "./opencode";
import { qwen } from "./qwen";
import { copilot } from "./copilot";

export const AGENTS: Record<string, Agent> = { claude, codex, gemini, opencode, copilot, qwen };

export const agentIds = () => Object.keys(AGENTS).join(", ");

export function agentTitles(): string {
  return Object.values(AGENTS).map((a) => `${a.id} (${a.title})`).join(", ");
}

// Which agent a peer is, from the MCP client it named in its handshake ("codex-mcp-client 0.171.0"):
// the agent's title, else the client's own name; "" when it said none (a2a mcp run by hand, or a
// peer of an earlier release).
export function agentOfClient(client: string | null | undefined): string {
  if (!client) return "";
  const name = client.split(" ")[0];
  return Object.values(AGENTS).find((a) => a.mcpClient.test(name))?.title ?? name;
}
