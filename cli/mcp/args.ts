// Argument schemas shared by the tools, and the one-line message for arguments of the wrong
// shape. Models sometimes send numbers and booleans as strings ("300", "true"); like
// agent2agent's pydantic models we accept those, and nothing looser. Names and sizes are
// checked by lib/ itself, so their errors read exactly as the CLI's.

import { cut } from "../../lib/core/cut";
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const numeric = (v: unknown) => (typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v);
const boolish = (v: unknown) => (v === "true" ? true : v === "false" ? false : v);

// Without the naming rule: every tool list would carry it, and a name that breaks it is refused
// with the whole rule (lib/core/names.ts NAME_RULE), which is when a model needs it.
export const slotName = (what: string) => z.string().describe(what);

export const seconds = (dflt: number, what: string) => z.preprocess(numeric, z.number().min(0).default(dflt)).describe(what);

export const count = (what: string) => z.preprocess(numeric, z.number().int().min(0)).describe(what);

export const countDefault = (dflt: number, what: string) =>
  z.preprocess(numeric, z.number().int().min(0).default(dflt)).describe(what);

export const boundedCount = (dflt: number, min: number, max: number, what: string) =>
  z.preprocess(numeric, z.number().int().min(min).max(max).default(dflt)).describe(what);

export const flag = (dflt: boolean, what: string) => z.preprocess(boolish, z.boolean().default(dflt)).describe(what);

// A list of names; a single string "a, b" is read as that list.
export const nameList = (what: string) =>
  z
    .preprocess((v) => (typeof v === "string" ? v.split(/[\s,]+/).filter(Boolean) : v), z.array(z.string()).min(1))
    .describe(what);

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
}

function received(args: unknown, path: PropertyKey[]): string {
  let v: any = args;
  for (const k of path) v = v == null ? undefined : v[k as any];
  if (v === undefined) return "nothing";
  const shown = JSON.stringify(v) ?? String(v);
  return `${Array.isArray(v) ? "array" : v === null ? "null" : typeof v} ${cut(shown, 40)}`;
}

// "timeout: expected number, got string \"soon\""; "name: required".
export function describeIssues(args: unknown, issues: Issue[]): string {
  return issues
    .map((i) => {
      const where = i.path.map(String).join(".") || "arguments";
      if (i.code === "invalid_type") {
        const got = received(args, i.path);
        return got === "nothing" ? `${where} is required` : `${where}: expected ${i.expected}, got ${got}`;
      }
      return `${where}: ${i.message.replace(/^Invalid input: /, "")}`;
    })
    .join("; ");
}

// The SDK reports a schema mismatch as a multi-line "MCP error -32602: Input validation
// error: ..." text. Re-validating on failure gives the project's one-line form instead. This
// reaches into McpServer.validateToolInput (SDK 1.32.2); if a later SDK renames it, the SDK's
// own message is used and nothing else changes.
export function oneLineValidationErrors(server: McpServer): void {
  const s = server as unknown as { validateToolInput?: (tool: any, args: unknown, name: string) => Promise<unknown> };
  const original = s.validateToolInput?.bind(server);
  if (!original) return;
  s.validateToolInput = async (tool, args, name) => {
    try {
      return await original(tool, args, name);
    } catch (e) {
      const parsed = await tool?.inputSchema?.safeParseAsync?.(args ?? {});
      if (!parsed || parsed.success) throw e;
      throw new Error(
        `a2a: invalid arguments for ${name} (${describeIssues(args ?? {}, parsed.error.issues)}): pass what the tool's input schema describes and call ${name} again (EUSAGE)`,
      );
    }
  };
}
