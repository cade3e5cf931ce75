// `reserve`, `release`, `reservations`: reservations on paths of the repository the command runs
// in (lib/reservations/reserve.ts). Each is parse -> one lib call -> format; how it ends is
// cli/run.ts's.

import type { Command } from "commander";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import type { Reservation } from "../../lib/reservations/reserve";
import { table } from "../format";
import { inertLine } from "../inert";
import { durationMs, durationSec, json, out } from "../io";
import { action, command, end, type Ctx } from "../run";

const AS = ["--as <name>", "who holds the reservations (default: $A2A_AGENT, else this session's name: see a2a whoami)"] as const;

const kind = (r: Reservation) => (r.exclusive ? "exclusive" : "shared");

export const commands = {
  reserve: (p: Command) =>
    command(p, "reserve", {
      summary: "reserve paths or globs of this repository, all or none",
      description:
        "Reserve every PATTERN (a path, a directory: everything under it, or a glob: * and ? within one segment, ** across segments, [a-z]) of the repository you are in, relative to where you are, for --ttl (default 1h), or none of them. Exclusive unless --shared (shared reservations coexist with each other, not with an exclusive one). If another agent holds an overlapping pattern, nothing is reserved and the command exits 4 naming them, their pattern, reason and expiry; with --wait it blocks until it can take them all (124 on --timeout). Reserving again renews. Every worktree of a repository shares its reservations; the PreToolUse hook and the git guard refuse edits and commits of what others hold.",
      examples: ["a2a reserve 'src/api/**' --reason 'splitting the api' --ttl 2h", "a2a reserve docs --shared", "a2a reserve src/db.ts --wait --timeout 10m"],
      json: "print the reservations: [{pattern, holder, exclusive, reason, created_at, expires_at, ...}]",
      quiet: true,
    })
      .argument("<patterns...>", "paths or globs, relative to the current directory (or absolute inside the repository)")
      .option("--ttl <duration>", "how long they last (default 1h)")
      .option("--shared", "a shared reservation: others may hold shared ones that overlap")
      .option("--reason <text>", "why, shown to whoever is refused")
      .option(...AS)
      .option("--wait", "block until every pattern can be taken, then take them")
      .option("--timeout <seconds>", "with --wait, give up after this long (exit 124)")
      .action(action(async (c: Ctx, patterns: string[], o) => {
        if (o.timeout !== undefined && !o.wait) throw new A2AError("EUSAGE", "--timeout applies to --wait only: add --wait or drop --timeout");
        const outcome = await c.bus.reservations.reserve(patterns, {
          as: o.as, cwd: process.cwd(), ttlSec: durationSec(o.ttl, "--ttl"), shared: !!o.shared, reason: o.reason,
          wait: !!o.wait, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.wait ? c.signal() : undefined,
        });
        const rs = end(c, outcome, {
          timeout: (pending) => text`timed out waiting for ${pending.join(", ")}: nothing was reserved; raise ${arg("timeout")} or see ${op("reservations")}`,
        })!;
        c.confirm(rs, `reserved ${rs.map((r) => inertLine(r.pattern)).join(", ")} (${kind(rs[0])}) as ${rs[0].holder} until ${isoTime(Math.min(...rs.map((r) => r.expires_at)))}`);
      })),

  release: (p: Command) =>
    command(p, "release", {
      summary: "release reservations you hold",
      description: "Release your reservations of PATTERNS (as you reserved them; relative to where you are), or all of yours in this repository with --all. Exit 4, before anything is released, if one of them is another agent's.",
      examples: ["a2a release 'src/api/**'", "a2a release --all"],
      json: "print {released: [patterns]}",
      quiet: true,
    })
      .argument("[patterns...]", "the patterns to release")
      .option("--all", "release every reservation you hold in this repository")
      .option(...AS)
      .action(action(async (c: Ctx, patterns: string[], o) => {
        if (!!o.all === patterns.length > 0) throw new A2AError("EUSAGE", "give the patterns to release, or --all (not both)");
        const released = await c.bus.reservations.release(o.all ? "all" : patterns, { as: o.as, cwd: process.cwd() });
        c.confirm({ released }, released.length ? `released ${released.map(inertLine).join(", ")}` : "nothing to release: you held none of those");
      })),

  reservations: (p: Command) =>
    command(p, "reservations", {
      summary: "list live reservations of this repository",
      description: "List the live reservations of the repository you are in (every worktree of it): pattern, holder, exclusive or shared, expiry and reason. With PATHs, only those overlapping them: who holds what covers each.",
      examples: ["a2a reservations", "a2a reservations src/api/routes.ts --json"],
      json: "print {repo, root, reservations: [...]}",
    })
      .argument("[paths...]", "only reservations overlapping these paths or globs")
      .action(action(async (c: Ctx, paths: string[]) => {
        const l = await c.bus.reservations.list({ cwd: process.cwd(), paths });
        if (c.json) return out(json(l));
        const rows = l.reservations.map((r) => [inertLine(r.pattern), inertLine(r.holder), kind(r), isoTime(r.expires_at), inertLine(r.reason ?? "")]);
        out(rows.length ? table(["PATTERN", "HOLDER", "KIND", "UNTIL", "REASON"], rows) : `no reservations${paths.length ? " cover those paths" : ""} in ${inertLine(l.root)}\n`);
      })),
};
