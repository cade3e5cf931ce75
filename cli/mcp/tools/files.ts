// The `files` tools: reserve_files, release_files, list_reservations. Same meanings as the
// CLI's `a2a reserve` / `a2a release` / `a2a reservations` (one bus.reservations operation
// each), in the repository the server runs in (its working directory, the session's); the
// holder is the session's name, so the PreToolUse hook and the git guard of this session let
// its own edits through. A reservation answered to a call that was cancelled stands until its
// ttl or a release: nothing is given back (reserving again is harmless, it renews).

import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { isoTime } from "../../../lib/core/time";
import type { Reservation } from "../../../lib/reservations/reserve";
import type { McpCtx } from "../context";
import { flag, seconds } from "../args";
import { bounded } from "../bounded";
import { handler } from "../result";
import { notYet } from "./tasks";

const view = (r: Reservation) => ({ pattern: r.pattern, holder: r.holder, exclusive: r.exclusive, reason: r.reason, expires_at: r.expires_at, until: isoTime(r.expires_at) });
const shared = { openWorldHint: true } as const;

export function registerFileTools(server: McpServer, ctx: McpCtx): void {
  const { bus, session } = ctx;
  const cwd = process.cwd();
  const capNote = `one call blocks at most ${ctx.maxWaitSec} s, then returns error "still_waiting" with remaining_secs: call it again right away with timeout=remaining_secs`;
  // A single string is one path (a path may hold spaces or commas, so it is never split).
  const paths = z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(z.string()).min(1)).describe("Paths or globs relative to the repository's working directory: a file, a directory (everything under it), or a glob (* and ? within one path segment, ** across them), e.g. [\"src/api/**\", \"docs/setup.md\"]");

  server.registerTool("reserve_files", {
    title: "Reserve files before editing them",
    description: `Reserve paths of this repository for you for ttl seconds, all or none, so other agents' edits and commits of them are refused: call it before editing files other agents may be editing too. Exclusive by default; exclusive=false makes a shared reservation that coexists with other shared ones. If another agent holds an overlapping pattern, nothing is reserved and the call fails with ECONFLICT naming them, their pattern, reason and expiry: message them or work elsewhere. With wait=true it blocks until it can reserve them (${capNote}). Reserving again renews. Release with release_files when done.`,
    inputSchema: {
      paths,
      exclusive: flag(true, "false: a shared reservation"),
      ttl: seconds(3600, "How long, in seconds (default 3600)"),
      reason: z.string().optional().describe("Why, shown to agents who are refused"),
      wait: flag(false, "true: block until every path can be reserved, then reserve them"),
      timeout: seconds(300, "With wait: give up after this many seconds (default 300)"),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "reserve_files", async (a: { paths: string[]; exclusive: boolean; ttl: number; reason?: string; wait: boolean; timeout: number }, extra) => {
    const opts = { as: session.me, cwd, ttlSec: a.ttl, shared: !a.exclusive, reason: a.reason };
    if (!a.wait) return { ok: true, reservations: (await bus.reservations.reserve(a.paths, opts)).value!.map(view) };
    const w = await bounded(ctx, extra, a.timeout, () => `waiting for ${a.paths.join(", ")}`, (timeoutMs, signal) => bus.reservations.reserve(a.paths, { ...opts, wait: true, timeoutMs, signal }));
    if (w.kind === "done") return { ok: true, reservations: w.value!.map(view) };
    return { paths: a.paths, held: w.pending, ...notYet(w, ctx.maxWaitSec, `reserve_files(paths=${JSON.stringify(a.paths)}, wait=true, timeout=TIMEOUT)`, `Still held by others: ${w.pending.join(", ")}`) };
  }));

  server.registerTool("release_files", {
    title: "Release files you reserved",
    description: "Release your reservations of paths (as you reserved them), or all of yours in this repository when paths is omitted. Fails with ECONFLICT, releasing nothing, if one is another agent's.",
    inputSchema: { paths: paths.optional() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "release_files", async (a: { paths?: string[] }) => ({ ok: true, released: await bus.reservations.release(a.paths ?? "all", { as: session.me, cwd }) })));

  server.registerTool("list_reservations", {
    title: "List file reservations",
    description: "List the live reservations of this repository (all, or those overlapping path): pattern, holder, exclusive, reason and expiry. Check it before editing files others may hold.",
    inputSchema: { path: z.string().optional().describe("Only reservations overlapping this path or glob") },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "list_reservations", async (a: { path?: string }) => {
    const l = await bus.reservations.list({ cwd, paths: a.path === undefined ? undefined : [a.path] });
    return { ok: true, root: l.root, reservations: l.reservations.map(view) };
  }));
}
