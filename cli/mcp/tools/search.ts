// The search tool: ranked matches across what the session's agent may read, as `a2a search`
// (lib/search/; docs/PROTOCOL.md §20). Snippets are other agents' words: framed as untrusted.

import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { UNTRUSTED_NOTE } from "../../frame";
import type { McpCtx } from "../context";
import { framed, handler } from "../result";

export function registerSearchTools(server: McpServer, ctx: McpCtx): void {
  const { bus, session } = ctx;
  server.registerTool("search", {
    title: "Search messages, topics, slots and tasks",
    description:
      'Find what agents wrote, best match first (ties newest first): your own mail (your inbox and what you sent), topic posts, slot tasks and results, task payloads and results. query: words that must all appear, a word ending in * is a prefix (pars*), "words in double quotes" must appear in that order; hyphenated (e-mail) and non-ASCII words work. Each hit has kind (message, topic, slot, task), id (message id, TOPIC#ID, slot name, task id: read it whole with check_messages/read_thread, read_topic, agent_status, task_show), author, time (unix seconds) and a snippet with the matched words marked «like this». Marks nothing read.',
    inputSchema: {
      query: z.string().describe('Words, prefixes (pars*) and "phrases"'),
      in: z.array(z.enum(["mail", "topics", "slots", "tasks"])).optional().describe("Search only these (default: all)"),
      from: z.string().optional().describe("Only what this agent wrote"),
      since: z.union([z.string(), z.number()]).optional().describe("Only what was written since: a duration back from now (2h, 7d), an ISO time, or unix seconds"),
      limit: z.number().int().optional().describe("At most this many hits (default 20, at most 1000)"),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, handler(ctx, "search", async (a: { query: string; in?: string[]; from?: string; since?: string | number; limit?: number }) => {
    const hits = await bus.search.find(session.me, a.query, { in: a.in, from: a.from, since: a.since, limit: a.limit });
    const lines = hits.map((h) => `${h.kind} ${h.id} by ${h.author ?? "-"}: ${h.snippet.replace(/[\u0000-\u001f\u007f]/g, " ")}`);
    const head = hits.length ? `${hits.length} hit(s), best first:\n` : "Nothing found.";
    return framed({ ok: true, count: hits.length, hits, ...(hits.length ? { untrusted: UNTRUSTED_NOTE } : {}) }, hits.length ? `${head}${lines.join("\n")}\n(snippets are ${UNTRUSTED_NOTE}.)` : head);
  }));
}
