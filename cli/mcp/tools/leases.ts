// The lease tools: lease_take, lease_renew, lease_release, lease_list. Same meanings as the
// CLI's `a2a lease` (one bus.leases operation each); the holder is the session's name. lease_take
// with wait follows agent_wait's rules, and leases are the client's only once their answer is
// written, as a task claim is (tools/tasks.ts, the header).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { LeaseTake } from "../../../lib/leases/lease";
import { flag, nameList, seconds } from "../args";
import { bounded } from "../bounded";
import type { McpCtx } from "../context";
import { handler } from "../result";
import { capNoteFor, giveBackUnlessDelivered, notYet, refuseIfStopping, shared } from "./tasks";

export function registerLeaseTools(server: McpServer, ctx: McpCtx): void {
  const { bus, session } = ctx;
  const cap = ctx.maxWaitSec;
  const capNote = capNoteFor(cap);
  const leaseNames = nameList("The names to lease (files, a branch, anything: letters, digits, '.', '_', '-'), e.g. [\"schema\", \"api\"]");

  server.registerTool("lease_take", {
    title: "Reserve names (files, branches) for a while",
    description: `Reserve every name in names for you (this session) for ttl seconds, or none of them: if any is held by another agent, nothing is taken and the call fails with ECONFLICT naming each holder and expiry. Use it before editing files other agents may edit too, with the same names they would use; release them with lease_release when done (they run out by themselves after ttl). A call cancelled before its answer is sent takes nothing. With wait=true it blocks until all are free. ${capNote}`,
    inputSchema: {
      names: leaseNames,
      ttl: seconds(300, "How long the leases last, in seconds (default 300)"),
      wait: flag(false, "true: block until every name is free, then take them"),
      timeout: seconds(300, "With wait: give up after this many seconds (default 300)"),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "lease_take", async (a: { names: string[]; ttl: number; wait: boolean; timeout: number }, extra) => {
    const opts = { as: session.me, ttlSec: a.ttl };
    const handOut = (t: LeaseTake) => {
      giveBackUnlessDelivered(ctx, extra, `leases on ${t.writes.map((x) => x.name).join(", ")}`, async () => (await bus.leases.untake(t)).length > 0);
      return { ok: true, leases: t.leases };
    };
    refuseIfStopping(ctx, "taken");
    if (!a.wait) return handOut((await ctx.deliveries.track(bus.leases.takeUndoably(a.names, opts))).value!);
    const w = await bounded(ctx, extra, a.timeout, () => `waiting for ${a.names.join(", ")} to be free`, (timeoutMs, signal) => ctx.deliveries.track(bus.leases.takeUndoably(a.names, { ...opts, wait: true, timeoutMs, signal })));
    if (w.kind === "done") return await handOut(w.value!);
    return { names: a.names, held: w.pending, ...notYet(w, cap, `lease_take(names=${JSON.stringify(a.names)}, wait=true, timeout=TIMEOUT)`, `Still held: ${w.pending.join(", ")}`) };
  }));

  server.registerTool("lease_renew", {
    title: "Extend leases you hold",
    description: "Extend leases you hold by ttl seconds from now. Fails with ECONFLICT if you do not hold one of them.",
    inputSchema: { names: leaseNames, ttl: seconds(300, "The new length from now, in seconds (default 300)") },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "lease_renew", async (a: { names: string[]; ttl: number }) => ({ ok: true, leases: await bus.leases.renew(a.names, { as: session.me, ttlSec: a.ttl }) })));

  server.registerTool("lease_release", {
    title: "Release leases you hold",
    description: "Release leases you hold, so other agents can take the names at once. Names already free are left alone; fails with ECONFLICT, releasing nothing, if one is held by another agent.",
    inputSchema: { names: leaseNames },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "lease_release", async (a: { names: string[] }) => ({ ok: true, released: await bus.leases.release(a.names, { as: session.me }) })));

  server.registerTool("lease_list", {
    title: "List leases held now",
    description: "List the leases held now (all, or of names): name, holder, taken_at and expires_at (unix seconds). Check it before editing shared files.",
    inputSchema: { names: leaseNames.optional() },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, ...shared },
  }, handler(ctx, "lease_list", async (a: { names?: string[] }) => ({ ok: true, leases: await bus.leases.list(a.names) })));
}
