// JSON-RPC errors as the protocol defines them, whatever the SDK (1.x) would send (issue 37,
// findings 2 and 5). Every request handler the server holds is wrapped once, after all are
// registered, so that:
//   - parameters a method's schema refuses (initialize without capabilities, resources/read
//     without uri, a tool name that is a number) are -32602 with one line naming each problem,
//     not -32603 with the validator's dump;
//   - tools/call of a tool the session does not offer is -32602 (a protocol error: the call
//     never reached a tool), not a tool result with isError;
//   - a list's cursor that a2a never issued (it does not paginate) is -32602, not page one;
//   - a resource that does not exist is -32002 with data.uri, whatever its scheme;
//   - error.message carries the message alone: the SDK's McpError puts "MCP error -32602: "
//     in front, which clients print again before their own.
// The handlers live in the SDK's protocol map under their method names (SDK 1.32.2); if a later
// SDK moves them, nothing is wrapped and its own errors go out.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describeIssues } from "./args";

const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;
const LISTS = new Set(["tools/list", "resources/list", "resources/templates/list", "prompts/list"]);

type Handler = (request: any, extra: unknown) => Promise<unknown>;

export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const PREFIX = /^MCP error -?\d+: /;

// What a handler threw, as the error the client is sent.
function asProtocolError(method: string, request: any, e: unknown): unknown {
  const err = e as { name?: string; code?: unknown; message?: string; issues?: unknown[]; data?: unknown };
  if (Array.isArray(err?.issues)) { // the validator's error (ZodError, $ZodError: its name varies with the zod build)
    // The schema parses the whole request: its paths start with "params".
    const issues = (err.issues as { path: PropertyKey[]; code: string; message: string; expected?: string }[]).map((i) => ({ ...i, path: i.path[0] === "params" ? i.path.slice(1) : i.path }));
    return new ProtocolError(INVALID_PARAMS, `invalid params of ${method}: ${describeIssues(request?.params ?? {}, issues)}`);
  }
  if (typeof err?.code === "number" && typeof err.message === "string") {
    const message = err.message.replace(PREFIX, "");
    if (method === "resources/read" && (err.code === RESOURCE_NOT_FOUND || /^Resource .* not found$/.test(message))) {
      const uri = request?.params?.uri;
      return new ProtocolError(RESOURCE_NOT_FOUND, message.replace(/^Resource (.*) not found$/, "no resource $1: resources/list and resources/templates/list show what there is"), { ...(err.data as object), uri });
    }
    return new ProtocolError(err.code, message, err.data);
  }
  return e;
}

export function protocolErrors(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  if (!handlers) return;
  const tools = (server as unknown as { _registeredTools?: Record<string, unknown> })._registeredTools ?? {};
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        if (LISTS.has(method) && request?.params?.cursor !== undefined) {
          throw new ProtocolError(INVALID_PARAMS, `invalid cursor ${JSON.stringify(request.params.cursor)} for ${method}: a2a returns every item in one page, so there is no next page; call ${method} without a cursor`);
        }
        const name = request?.params?.name;
        if (method === "tools/call" && typeof name === "string" && !Object.hasOwn(tools, name)) {
          throw new ProtocolError(INVALID_PARAMS, `unknown tool ${JSON.stringify(name)}: tools/list names the tools this session offers (a2a mcp --tools chooses them)`);
        }
        return await handler(request, extra);
      } catch (e) {
        throw asProtocolError(method, request, e);
      }
    });
  }
}
