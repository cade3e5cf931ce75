// `a2a mcp` when it cannot work: the store cannot be used (a path that cannot be a directory,
// a directory that is not a store, no permission, a bad A2A_* setting) or --tools is wrong.
// Exiting would show up in Claude Code as a server that "failed", with nothing for the model
// to say; instead the server serves the tools it was asked for, and every call answers with
// that one error, phrased for the model (phrase(err, MODEL)) and ending in the fix, so it can
// tell its user. Nothing is read or written in the store.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import pkg from "../../package.json" with { type: "json" };
import { asA2AError, phrase } from "../../lib/core/errors";
import { err } from "../io";
import { MODEL } from "./phrase";
import { Revision, withRevision } from "./revision";

export async function serveUnavailable(e: unknown, tools: Set<string>): Promise<void> {
  const a = asA2AError(e);
  const message = `a2a cannot work here: ${phrase(a, MODEL)} (${a.code}). Tell your user; after fixing it, restart the session (or /mcp reconnect).`;
  err(`a2a mcp: ${phrase(a, MODEL)}: serving every tool as this error\n`);
  const serverInfo = { name: "a2a", title: "a2a: coordination bus for AI agents (unavailable)", version: pkg.version };
  const server = new McpServer(serverInfo, { capabilities: { tools: {} }, instructions: message });
  for (const name of tools) {
    server.registerTool(name, { title: `${name} (unavailable)`, description: `Unavailable: ${message}`, inputSchema: {} }, async () => ({
      content: [{ type: "text", text: message }],
      structuredContent: { ok: false, error: a.code, message, ...(Object.keys(a.data).length ? { data: a.data } : {}) },
      isError: true,
    }));
  }
  const stop = () => process.exit(0);
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, stop);
  // A client of revision 2026-07-28 is told too (revision.ts).
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const capabilities = { tools: { listChanged: false } };
  withRevision(transport, new Revision({ capabilities: () => capabilities, serverInfo, instructions: message, client: () => {} }));
  await new Promise<never>(() => {});
}
