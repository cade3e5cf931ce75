// `a2a mcp`: the MCP stdio server, a drop-in for agent2agent 0.2.0, on the same store and
// the same bus operations (lib/bus.ts) as the CLI. This module owns the lifecycle: it builds
// the session (session.ts: presence, identity, inbox) first, then registers every tool group
// of tools/ with one context (context.ts), the resources (resources.ts) and the inbox push
// (push.ts), and serves over a transport that bounds what a client can make it hold and
// reports when each answer was written (transport.ts, delivery.ts).
// cli/main.ts imports this module only for `a2a mcp`, so the SDK and zod never load for
// other commands.
//
// Invariants:
// - stdout carries nothing but JSON-RPC (console.* is routed to the A2A_LOG log on stderr);
// - one Bus for the server's lifetime, so all waits share one directory watch;
// - the server exits promptly when its client goes away (stdin ends, stdout breaks; also
//   while answers wait unwritten on a full stdout) or on SIGTERM/SIGINT/SIGHUP: every wait is released, the messaging session is closed, the
//   watches are closed, exit 0. A server outliving its client is a ghost peer.
// - a malformed input line is reported (A2A_LOG) and skipped; the server keeps serving;
// - a store that cannot be used (a bad path or setting, a foreign directory, no permission)
//   or a bad --tools never makes a silent exit: the server serves anyway (unavailable.ts),
//   and every tool call answers with that one error, phrased for the model to relay;
// - tools/list holds the tools of --tools only (toolsets.ts); the unread note and the inbox
//   push, which name check_messages, are on only when that tool is offered.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import pkg from "../../package.json" with { type: "json" };
import { openBus, type Bus } from "../../lib/bus";
import { compactToolList } from "./compact";
import { makeCtx, type McpCtx } from "./context";
import { err } from "../io";
import { oneLineValidationErrors } from "./args";
import { protocolErrors } from "./protocol-errors";
import { Revision } from "./revision";
import { Deliveries } from "./delivery";
import { instructionsFor } from "./instructions";
import { startPush } from "./push";
import { registerResources } from "./resources";
import { registerBlobResource } from "./attachments";
import { OUTPUTS } from "./outputs";
import { openSession } from "./session";
import { DeliveryTransport } from "./transport";
import { registerChannelTools } from "./tools/channels";
import { registerFileTools } from "./tools/files";
import { registerLeaseTools } from "./tools/leases";
import { registerMessageTools } from "./tools/messages";
import { registerPeerTools } from "./tools/peers";
import { registerSearchTools } from "./tools/search";
import { registerSlotTools } from "./tools/slots";
import { registerTaskTools } from "./tools/tasks";
import { registerTopicTools } from "./tools/topics";
import { registerWaitTools } from "./tools/waits";
import { selectTools } from "./toolsets";
import { serveUnavailable } from "./unavailable";

// Every tool group, in tools/list order; each gets the same context (session included).
const TOOL_GROUPS: ((server: McpServer, ctx: McpCtx) => void)[] = [
  registerSlotTools,
  registerWaitTools,
  registerChannelTools,
  registerPeerTools,
  registerMessageTools,
  registerTopicTools,
  registerTaskTools,
  registerLeaseTools,
  registerFileTools,
  registerSearchTools,
];

const GRACE_MS = 2000; // the most shutdown waits for answers being written to settle, and for the store to close

// A view of `server` that registers only the selected tools (the groups register them all),
// each with its output schema (outputs.ts).
function only(server: McpServer, tools: Set<string>): McpServer {
  return new Proxy(server, {
    get(target, key, receiver) {
      if (key !== "registerTool") return Reflect.get(target, key, receiver);
      return (name: string, config: object, cb: unknown) =>
        tools.has(name) ? (target.registerTool as (...a: unknown[]) => unknown)(name, { ...config, outputSchema: OUTPUTS[name] }, cb) : undefined;
    },
  });
}

export async function runMcpServer(dir?: string, toolsSpec?: string): Promise<void> {
  let tools: Set<string>;
  let bus: Bus, session;
  try {
    tools = selectTools(toolsSpec);
  } catch (e) {
    return serveUnavailable(e, selectTools(undefined));
  }
  try {
    bus = openBus({ dir });
    session = await openSession(bus, process.cwd(), (line) => bus.settings.log && err(`a2a mcp: ${line}\n`));
  } catch (e) {
    return serveUnavailable(e, tools);
  }
  const stopping = new AbortController();
  const deliveries = new Deliveries();
  const ctx = makeCtx(bus, session, deliveries, stopping.signal, tools);
  for (const k of ["log", "info", "debug", "warn", "error"] as const) console[k] = (...a: unknown[]) => ctx.log(a.map(String).join(" "));

  const serverInfo = { name: "a2a", title: "a2a: coordination bus for AI agents", version: pkg.version };
  const server = new McpServer(
    serverInfo,
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        // ctx.warn's lines; the SDK answers logging/setLevel and drops what is below the level.
        logging: {},
        experimental: { "claude/channel": {} },
      },
      instructions: instructionsFor(tools),
    },
  );
  oneLineValidationErrors(server);
  ctx.warn = (line) => {
    ctx.log(line);
    void server.server.sendLoggingMessage({ level: "warning", logger: "a2a", data: line }).catch(() => {}); // no client left to tell
  };
  for (const register of TOOL_GROUPS) register(only(server, tools), ctx);
  compactToolList(server);
  // The SDK declares listChanged for tools as it registers them; a session's tool list never
  // changes (--tools is read once), so no notification will ever come: say so.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  const resources = registerResources(server, ctx);
  registerBlobResource(server, ctx);
  const stopPush = tools.has("check_messages") ? startPush(server, ctx) : () => {};
  server.server.onerror = (e) => ctx.log(`protocol: ${e.message.split("\n")[0]}`);
  // Which agent this session is (a2a peers shows it): the client's name from its handshake.
  const sayClient = () => {
    const v = server.server.getClientVersion();
    const client = typeof v?.name === "string" ? `${v.name} ${typeof v.version === "string" ? v.version : ""}`.trim() : "";
    if (client) session.presence.setClient(client).then(() => ctx.log(`client: ${client}`), (e) => ctx.log(`saying the client: ${(e as Error).message}`));
  };
  const prevInit = server.server.oninitialized;
  server.server.oninitialized = () => {
    prevInit?.();
    sayClient();
  };
  // Revision 2026-07-28 has no handshake: the first request's envelope says who the client is,
  // and the SDK's Server keeps it where `initialize` would have put it (wake-ways.ts reads it);
  // what starts once a handshake is done (the inbox push, the client's name) starts then.
  let opened = false;
  const revision = new Revision({
    capabilities: () => (server.server as unknown as { getCapabilities(): ServerCapabilities }).getCapabilities(), // private in 1.32.2's types only
    serverInfo,
    instructions: instructionsFor(tools),
    client(info, capabilities) {
      Object.assign(server.server as unknown as Record<string, unknown>, { _clientCapabilities: capabilities, _clientVersion: info });
      if (opened) return sayClient();
      opened = true;
      server.server.oninitialized?.();
    },
  });

  let stopped: Promise<void> | undefined;
  const shutdown = (why: string) =>
    (stopped ??= (async () => {
      ctx.log(`stopping: ${why}`);
      stopping.abort();
      resources.close();
      stopPush();
      // Answers not yet written return their mail to unread (delivery.ts, tools/messages.ts).
      await Promise.race([deliveries.close().catch((e) => ctx.log(`closing deliveries: ${(e as Error).message}`)), Bun.sleep(GRACE_MS)]);
      // A store that cannot be reached (a partition, a server gone) must not hold the exit for
      // its connect timeout: the presence left behind expires and is swept like a crashed one's.
      const closed = (async () => {
        await session.close().catch((e) => ctx.log(`removing the presence: ${(e as Error).message}`));
        await bus.close().catch((e) => ctx.log(`closing the store: ${(e as Error).message}`));
      })();
      if (!(await Promise.race([closed.then(() => true), Bun.sleep(GRACE_MS).then(() => false)]))) ctx.log(`the store did not close within ${GRACE_MS} ms: exiting`);
      process.exit(0);
    })());
  // A closed transport reads nothing any more: the server must not linger as a ghost either.
  const prevOnclose = server.server.onclose;
  server.server.onclose = () => {
    prevOnclose?.();
    shutdown("transport closed");
  };
  process.stdin.on("end", () => shutdown("stdin closed"));
  process.stdin.on("close", () => shutdown("stdin closed"));
  process.stdout.on("error", () => shutdown("stdout closed"));
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => shutdown(sig));
  // A bug in one handler or listener must not take every tool away from the client.
  process.on("uncaughtException", (e) => ctx.log(`uncaught: ${e?.stack ?? e}`));
  process.on("unhandledRejection", (e) => ctx.log(`unhandled: ${(e as Error)?.stack ?? e}`));

  protocolErrors(server); // last: every handler is registered by now
  await server.connect(new DeliveryTransport(deliveries, process.stdout, process.stdin, ctx.log, revision));
  ctx.log(`serving on stdio, store ${bus.where}, max wait ${ctx.maxWaitSec} s`);
  await new Promise<never>(() => {}); // runs until shutdown exits the process
}
