// tools/list as a model pays for it: every byte of it sits in the context of each session that
// loads a2a, so what the protocol lets a client assume is left out. Dropped, per tool:
//   - "$schema" (the SDK's draft-07 marker: MCP reads a schema without one as JSON Schema
//     2020-12, and a2a's schemas mean the same under both);
//   - "execution": {"taskSupport": "forbidden"} (absent means forbidden);
//   - an annotation hint equal to its default (readOnlyHint false, destructiveHint true,
//     idempotentHint false, openWorldHint true), and the annotations object once empty;
//   - "maximum": 2^53-1 on an integer (zod's safe-integer bound: no client can send more anyway);
//   - in an output schema, also "minimum": -(2^53-1), "propertyNames": {"type": "string"} (every
//     JSON key is one) and "additionalProperties": false: a result may gain fields a client does
//     not know, which it ignores (outputs.ts; the tests check every field is declared).
// Nothing a client or a model acts on changes: tests/e2e/tool-budget.test.ts checks the list
// still validates and holds every tool, and its size per set stays within budget.
//
// This wraps the SDK's own tools/list handler (McpServer 1.x keeps it in the protocol's handler
// map under "tools/list"); if a later SDK moves it, the list is served unchanged.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const HINT_DEFAULTS: Record<string, boolean> = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

type Handler = (request: unknown, extra: unknown) => Promise<{ tools?: Record<string, unknown>[] }>;

function compactSchema(node: unknown, output = false): unknown {
  if (Array.isArray(node)) return node.map((n) => compactSchema(n, output));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$schema") continue;
    if (k === "maximum" && v === Number.MAX_SAFE_INTEGER) continue;
    if (output && ((k === "minimum" && v === -Number.MAX_SAFE_INTEGER) || k === "propertyNames" || (k === "additionalProperties" && v === false))) continue;
    out[k] = k === "default" || k === "const" || k === "enum" ? v : compactSchema(v, output);
  }
  return out;
}

export function compactTool(tool: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...tool };
  if (out.inputSchema) out.inputSchema = compactSchema(out.inputSchema);
  if (out.outputSchema) out.outputSchema = compactSchema(out.outputSchema, true);
  const exec = out.execution as { taskSupport?: string } | undefined;
  if (exec && Object.keys(exec).length === 1 && exec.taskSupport === "forbidden") delete out.execution;
  const notes = out.annotations as Record<string, unknown> | undefined;
  if (notes) {
    const kept = Object.fromEntries(Object.entries(notes).filter(([k, v]) => HINT_DEFAULTS[k] !== v));
    if (Object.keys(kept).length) out.annotations = kept;
    else delete out.annotations;
  }
  return out;
}

export function compactToolList(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const list = handlers?.get("tools/list");
  if (!handlers || !list) return;
  handlers.set("tools/list", async (request, extra) => {
    const result = await list(request, extra);
    return result.tools ? { ...result, tools: result.tools.map(compactTool) } : result;
  });
}
