// `lease` (take, renew, release, list): leases on names, all or nothing, with expiry
// (lib/leases/lease.ts). Each subcommand is parse -> one lib call -> format; how it ends is
// cli/run.ts's.

import type { Command } from "commander";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import type { LeaseInfo } from "../../lib/leases/lease";
import type { DamagedChain } from "../../lib/tasks/state";
import { damagedWarning, table } from "../format";
import { durationMs, durationSec, err, json, out } from "../io";
import { action, command, end, type Ctx } from "../run";

const AS_LEASE = ["--as <name>", "who holds the leases (default: $A2A_AGENT, else this session's name: see a2a whoami)"] as const;

const leaseLine = (verb: string, ls: LeaseInfo[]) =>
  ls.length ? `${verb} ${ls.map((l) => l.name).join(", ")} as ${ls[0].holder} until ${isoTime(Math.min(...ls.map((l) => l.expires_at)))}\n` : "";

function leaseCommands(l: Command): void {
  command(l, "take", {
    summary: "lease every NAME, or none",
    description: "Lease every NAME (a name for a file, a branch, anything: letters, digits, '.', '_', '-') to you until --ttl (default 5m), or none of them: if any is held by someone else, nothing is taken and the command exits 4 naming each holder and expiry; with --wait it blocks until all are free (124 on --timeout). Taking a name you already hold extends it.",
    examples: ["a2a lease take schema api --as alice --ttl 30m", "a2a lease take deploy --wait --timeout 10m --as ci"],
    json: "print the leases: [{name, holder, taken_at, expires_at}]",
    quiet: true,
  })
    .argument("<names...>", "names to lease")
    .option("--ttl <duration>", "how long the leases last (default 5m)")
    .option(...AS_LEASE)
    .option("--wait", "block until every name is free, then take them")
    .option("--timeout <seconds>", "with --wait, give up after this long (exit 124)")
    .action(action(async (c: Ctx, names: string[], o) => {
      if (o.timeout !== undefined && !o.wait) throw new A2AError("EUSAGE", "--timeout applies to --wait only: add --wait or drop --timeout");
      const outcome = await c.bus.leases.take(names, { as: (await c.bus.presence.acting(o.as, process.cwd())).name, ttlSec: durationSec(o.ttl, "--ttl"), wait: !!o.wait, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.wait ? c.signal() : undefined });
      const ls = end(c, outcome, {
        timeout: (pending) => text`timed out waiting for ${pending.join(", ")} to be free: nothing was taken; raise ${arg("timeout")} or see ${op("lease list")}`,
      })!;
      c.confirm(ls, leaseLine("leased", ls));
    }));

  command(l, "renew", {
    summary: "extend leases you hold",
    description: "Extend the leases on NAMES you hold by --ttl (default 5m) from now. Exit 4 if you do not hold one of them (it is free or someone else's).",
    examples: ["a2a lease renew schema --as alice --ttl 30m"],
    json: "print the leases as JSON",
    quiet: true,
  })
    .argument("<names...>", "leased names")
    .option("--ttl <duration>", "the new length, from now (default 5m)")
    .option(...AS_LEASE)
    .action(action(async (c: Ctx, names: string[], o) => {
      const ls = await c.bus.leases.renew(names, { as: (await c.bus.presence.acting(o.as, process.cwd())).name, ttlSec: durationSec(o.ttl, "--ttl") });
      c.confirm(ls, leaseLine("renewed", ls));
    }));

  command(l, "release", {
    summary: "release leases you hold",
    description: "Release the leases on NAMES you hold; names already free are left alone. Exit 4, before anything is released, if one of them is held by someone else. A name whose lease record is damaged (its holder cannot be read) is freed by whoever releases it.",
    examples: ["a2a lease release schema api --as alice"],
    json: "print {released: [names]}",
    quiet: true,
  })
    .argument("<names...>", "leased names")
    .option(...AS_LEASE)
    .action(action(async (c: Ctx, names: string[], o) => {
      const released = await c.bus.leases.release(names, { as: (await c.bus.presence.acting(o.as, process.cwd())).name });
      c.confirm({ released }, released.length ? `released ${released.join(", ")}` : "nothing to release: those names were free");
    }));

  command(l, "list", {
    summary: "list leases held now",
    description: "List the leases held now (of NAMES, or all): name, holder and expiry. Leases that ran out or were released are not shown; one whose record is damaged is left out with a warning on stderr naming its file (`a2a lease release NAME` frees it).",
    examples: ["a2a lease list", "a2a lease list schema --json"],
    json: "print the leases as a JSON array",
  })
    .argument("[names...]", "only these names")
    .action(action(async (c: Ctx, names: string[]) => {
      const damaged: DamagedChain[] = [];
      const ls = await c.bus.leases.list(names.length ? names : undefined, damaged);
      if (damaged.length) err(damagedWarning(damaged));
      if (c.json) return out(json(ls));
      out(ls.length ? table(["NAME", "HOLDER", "UNTIL"], ls.map((x) => [x.name, x.holder, isoTime(x.expires_at)])) : "no leases held\n");
    }));
}

export const commands = {
  lease: (p: Command) => {
    const l = command(p, "lease", {
      summary: "leases on names (files, branches, anything): all-or-nothing, with expiry",
      description: "Leases on names: reserve files, a branch or anything else for a while so other agents keep out, all-or-nothing for several names at once; a lease runs out by itself (--ttl), so a crashed holder never blocks anyone for long. Subcommands: take, renew, release, list.",
      examples: ["a2a lease take schema --as alice --ttl 30m", "a2a lease list", "a2a lease release schema --as alice"],
      json: "every subcommand takes --json",
    });
    leaseCommands(l);
    return l;
  },
};
