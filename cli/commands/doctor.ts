// `a2a doctor`: whether a2a will work here and, if not, what to do. Each check gives one
// line; a problem gives its fix too. Exit 0 when nothing is wrong, 1 otherwise (notes, such
// as "Claude Code is not installed" or "installed, a2a not set up for it", are not problems).
// A check leaves nothing behind: the handoff probe writes one slot, a2a-doctor, then clears it
// and removes its tombstone (when the slot had no record before); a store that does not exist
// yet is not created: the probe runs in a temporary store, removed after. The agents are checked
// from their files; --live also asks each agent's CLI (`mcp list`: seconds each). On a
// PostgreSQL store the checks are the server's (lib/pg/doctor.ts) and write nothing.

import type { Command } from "commander";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openBus, type Bus } from "../../lib/bus";
import { A2AError, asA2AError, phrase, render } from "../../lib/core/errors";
import { gitRoot } from "../../lib/presence/repo";
import type { Check } from "../agents/agent";
import { AGENTS } from "../agents/index";
import { agentVersion } from "../agents/version";
import { json, out } from "../io";
import { SHELL } from "../phrase";
import { action, command, type Ctx } from "../run";



const SKEW_LIMIT_SEC = 2;

const fromWhere = (bus: Bus) => ({ dir: "from --dir", A2A_DIR: "from A2A_DIR", default: "the default" })[bus.from];

type ServerReport = NonNullable<Awaited<ReturnType<Bus["admin"]["serverChecks"]>>>;

// A database store: where it is, then the server's own checks (the engine's, through the bus),
// which stand for the file checks (wake mode, inotify, owners, the handoffs and the clock
// through the filesystem). The session name is looked up only on a bus that is ready, since
// looking makes the schema when it is missing.
async function databaseChecks(bus: Bus, report: ServerReport, checks: Check[]): Promise<void> {
  checks.push({ check: "store", level: "ok", detail: `${bus.where} (${fromWhere(bus)}): PostgreSQL` });
  for (const k of report.checks) checks.push({ check: k.check, level: k.level, detail: render(k.detail, SHELL), fix: k.fix && render(k.fix, SHELL) });
  if (report.usable) await sessionCheck(bus, checks);
  else checks.push({ check: "session name", level: "note", detail: "not looked up until the bus can be used as it is (see above)" });
}

async function sessionCheck(bus: Bus, checks: Check[]): Promise<void> {
  try {
    const me = await bus.presence.sessionName(process.cwd());
    checks.push({ check: "session name", level: "ok", detail: `${me.name} (${me.why})` });
  } catch (e) {
    checks.push({ check: "session name", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "set A2A_AGENT to a valid name" });
  }
}

// Whether the store is shared: its marker says so once it exists, else A2A_SHARED (undefined:
// the store could not be described); and whether it exists.
async function storeChecks(bus: Bus, checks: Check[]): Promise<{ shared: boolean | undefined; exists: boolean }> {
  let d;
  try {
    d = await bus.admin.describe();
  } catch (e) {
    checks.push({ check: "store", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "fix the store as the line says" });
    return { shared: undefined, exists: true };
  }
  const shared = d.marker === "ok" ? d.markerMode === "shared" : bus.settings.shared;
  const from = fromWhere(bus);
  if (!d.exists) {
    checks.push({ check: "store", level: "ok", detail: `${bus.where} (${from}): not created yet; the first use creates it (mode ${shared ? "shared, 2770" : "private, 0700"})` });
  } else {
    const markerText = d.marker === "ok" ? `marker ok (${d.markerMode}, created by ${d.createdBy})` : d.marker === "absent" ? "no marker yet (written with the next write)" : "marker damaged";
    checks.push({ check: "store", level: d.marker === "damaged" ? "problem" : "ok", detail: `${bus.where} (${from}), owner ${d.owner}, mode ${d.mode} (${shared ? "shared" : "private"}), ${markerText}`, fix: d.marker === "damaged" ? `look at ${d.markerFile}: a2a writes it once, with the store` : undefined });
  }
  const { mode, at, filesystem: fs } = d.wake;
  const why =
    bus.settings.watchMode !== "auto" ? `A2A_WATCH=${bus.settings.watchMode}`
    : fs.kind === "network" ? `${fs.type} is a network filesystem: a watch sees only this machine's writes`
    : fs.kind === "unknown" ? `this platform does not say whether ${at} is on a network filesystem, where a watch would miss other machines' writes, so a2a polls as well (A2A_WATCH=watch if you know it is local)`
    : "a local filesystem";
  const wake = mode === "watch" ? "watch (inotify events)" : mode === "poll" ? `poll every ${bus.settings.pollMs} ms` : `watch + poll every ${bus.settings.pollMs} ms`;
  checks.push({ check: "wake mode", level: "ok", detail: `${wake}: ${why}` });
  return { shared, exists: d.exists };
}

const FINDINGS_SHOWN = 20;

// A shared store: sticky bits and owners (lib/maintenance/audit.ts), one line each.
async function ownerChecks(bus: Bus, shared: boolean, checks: Check[], all: boolean, hashBlobs: boolean): Promise<void> {
  let findings;
  try {
    let me: string | undefined;
    try {
      me = (await bus.presence.sessionName(process.cwd())).name;
    } catch {
      // reported by the session name check
    }
    findings = await bus.admin.audit(me, { hashBlobs });
  } catch (e) {
    return void checks.push({ check: "owners", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "fix the store as the line says" });
  }
  if (!shared) return;
  const blobs = hashBlobs ? "; every blob file another member owns holds the bytes its name says" : "; blob files other members own were checked by type and size (--hash-blobs also hashes each one)";
  if (!findings.length) return void checks.push({ check: "owners", level: "ok", detail: `sticky directories are sticky, and each inbox, policy and session record belongs to its agent's OS user${blobs}` });
  const shown = all ? findings.length : FINDINGS_SHOWN;
  for (const f of findings.slice(0, shown)) checks.push({ check: "owners", level: "problem", detail: `${f.path} ${f.problem}`, fix: f.fix });
  if (findings.length > shown) checks.push({ check: "owners", level: "problem", detail: `and ${findings.length - shown} more like these (a2a doctor --json lists them all)`, fix: "as above" });
}

// The line that puts `dir` on PATH for the user's shell, as install.sh prints it (the same
// file for the same $SHELL: tests/e2e/install.test.ts compares them).
export function pathLine(dir: string, shell: string | undefined): string {
  const name = (shell ?? "").split("/").pop();
  if (name === "fish") return `fish_add_path ${dir}`;
  const rc = name === "zsh" ? "~/.zshrc" : name === "bash" ? "~/.bashrc" : "~/.profile";
  return `echo 'export PATH="${dir}:$PATH"' >> ${rc} && export PATH="${dir}:$PATH"`;
}

function inotifyCheck(bus: Bus, checks: Check[]): void {
  const limits = bus.settings.platform.inotifyLimits();
  if (!limits) return void checks.push({ check: "inotify", level: "note", detail: "not used on this platform: waits use fs.watch events, and poll too (see wake mode)" });
  const { instances, watches } = limits;
  const low = instances < 64 || watches < 8192;
  checks.push({
    check: "inotify",
    level: low ? "problem" : "ok",
    detail: `max_user_instances ${instances}, max_user_watches ${watches} (each a2a process waiting uses one instance)`,
    fix: low ? "raise them: sudo sysctl fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288 (and in /etc/sysctl.d/)" : undefined,
  });
}

// A store that does not exist yet is not created for the probe: it runs in a temporary one.
async function handoffChecks(bus: Bus, exists: boolean, checks: Check[]): Promise<void> {
  if (exists) return handoff(bus, checks, "");
  const dir = mkdtempSync(join(tmpdir(), "a2a-doctor-"));
  const probe = openBus({ dir: join(dir, "store") });
  try {
    await handoff(probe, checks, " (in a temporary store: yours is not created yet)");
  } finally {
    await probe.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function handoff(bus: Bus, checks: Check[], where: string): Promise<void> {
  const name = "a2a-doctor";
  let had = true;
  try {
    had = (await bus.slots.read(name)).kind !== "absent";
    // In-process: a waiter on this bus, woken by a publish from it.
    const t0 = performance.now();
    const waiting = bus.slots.wait([name], { timeoutMs: 10_000 });
    const rec = await bus.slots.publish(name, "in-process");
    const o = await waiting;
    const ms = performance.now() - t0;
    checks.push(o.kind === "done" ? { check: "handoff in-process", level: "ok", detail: `publish -> wait woke in ${ms.toFixed(1)} ms${where}` } : { check: "handoff in-process", level: "problem", detail: "a waiter was not woken by a publish within 10 s", fix: "see the wake mode above; try A2A_WATCH=poll" });

    // Clock skew: the store stamps the record; compare with this host's clock.
    const skew = await bus.admin.clockSkew(name, rec.published_at ?? Date.now() / 1000);
    checks.push(Math.abs(skew) <= SKEW_LIMIT_SEC
      ? { check: "clock skew", level: "ok", detail: `${skew.toFixed(2)} s between this host and the store's filesystem` }
      : { check: "clock skew", level: "problem", detail: `the store's filesystem stamps files ${skew.toFixed(1)} s ${skew > 0 ? "ahead of" : "behind"} this host: TTLs, leases and presence go wrong`, fix: "synchronise the clocks of this host and the file server (NTP: chrony or systemd-timesyncd)" });

    // Through a spawned process: `a2a wait` in a child, woken by a publish here.
    const child = Bun.spawn({ cmd: [process.execPath, "--dir", bus.where, "wait", name, "--after-version", String(rec.version), "--timeout", "20"], stdout: "pipe", stderr: "pipe", env: process.env });
    const started = performance.now();
    // Published at once: a publish before the child's watch is up still counts (--after-version).
    await bus.slots.publish(name, "spawned");
    const [text, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    const msTotal = performance.now() - started;
    checks.push(code === 0 && text === "spawned"
      ? { check: "handoff via a process", level: "ok", detail: `a2a wait in a child got the publish: ${msTotal.toFixed(0)} ms, the child's start-up included${where}` }
      : { check: "handoff via a process", level: "problem", detail: `a2a wait in a child exited ${code} with ${JSON.stringify(text.slice(0, 80))}`, fix: "run a2a wait NAME in one shell and a2a publish NAME x in another to see the error" });
  } catch (e) {
    checks.push({ check: "handoff", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "fix the store first (see the store line)" });
  } finally {
    try {
      await bus.slots.clear(name);
      if (!had) await bus.admin.removeTombstone(name); // the probe's own record: nothing left behind
    } catch {
      // reported above
    }
  }
}

function pathCheck(checks: Check[]): void {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const me = real(process.execPath);
  const found = Bun.which("a2a");
  if (!found) return void checks.push({ check: "a2a on PATH", level: "problem", detail: `a2a is not on PATH (this binary is ${me})`, fix: pathLine(dirname(me), process.env.SHELL) });
  if (real(found) !== me) return void checks.push({ check: "a2a on PATH", level: "problem", detail: `a2a on PATH is ${found}, not this binary (${me})`, fix: `put ${dirname(me)} before ${dirname(found)} in PATH, or remove the other one` });
  checks.push({ check: "a2a on PATH", level: "ok", detail: `${found} is this binary` });
}

// Each coding agent a2a knows (cli/agents): on PATH or not, its version, then its own checks
// (registered, hooks installed), each problem with the command that fixes it. Run side by side:
// each asks its CLI, which takes up to seconds to start.
async function agentChecks(checks: Check[], live: boolean): Promise<void> {
  const project = gitRoot(process.cwd()) ?? process.cwd();
  const found = await Promise.all(
    Object.values(AGENTS).map(async (agent): Promise<Check[]> => {
      const bin = Bun.which(agent.bin) ?? undefined;
      if (!bin) return [{ check: agent.title, level: "note", detail: `${agent.bin} is not on PATH: nothing to check (to use it: npm install -g ${agent.npm}, then a2a setup ${agent.id})` }];
      const head: Check = { check: agent.title, level: "ok", detail: `${bin}, version ${(await agentVersion(bin, agent.npm)) ?? "unknown"}` };
      const own = await agent.doctor({ project, cwd: process.cwd(), home: homedir(), bin, live });
      // Not set up (one note under the agent's own name): one line, the version's.
      if (own.length === 1 && own[0].check === agent.title) return [{ ...own[0], detail: `${head.detail}; ${own[0].detail}` }];
      return [head, ...own];
    }),
  );
  checks.push(...found.flat());
}

export const commands = {
  doctor: (p: Command) =>
    command(p, "doctor", {
      summary: "check that a2a will work here, and say how to fix what will not",
      description:
        "Check the store (path and where it came from, marker, owner, private or shared; in a shared store, that the directories holding members' files are sticky and that each inbox, policy and session record belongs to its agent's OS user, and that blob files other members own are regular files of one size a digest, hashed with --hash-blobs), its filesystem and the wake mode it implies (watch or poll, and why), inotify limits, a live handoff in-process and through a spawned a2a wait, clock skew between this host and the store's filesystem, whether a2a on PATH is this binary, the session name a2a mcp takes here, and each coding agent a2a knows (Claude Code, Codex CLI, Gemini CLI, opencode): whether it is installed and, read from its config files, in which scope a2a is registered and whether the a2a hooks are installed (an agent installed but not set up is a note, not a problem); --live also runs each agent's mcp list to see the server connect (seconds per agent). The checks leave nothing behind: the handoff probe's slot is removed, and a store not created yet is not created (the probe runs in a temporary one). On a PostgreSQL store (postgres://...) the server stands for the filesystem: its version, the round trip of a query, a NOTIFY round trip (a pooler that drops LISTEN is found here), whether the connection is encrypted, clock skew against the server's now(), the bus's schema version against this a2a's, and the role connected and whether it may use the schema; nothing is created or changed. One line per check; a problem's line ends with its fix. Exit 0 when nothing is wrong, 1 otherwise.",
      examples: ["a2a doctor", "a2a doctor --json | jq '.checks[] | select(.level == \"problem\")'"],
      json: "print {ok, checks: [{check, level: ok|note|problem, detail, fix}]}",
    })
      .option("--live", "also ask each coding agent's CLI whether a2a's server connects (its mcp list: seconds per agent)")
      .option("--hash-blobs", "in a shared store, also hash every blob file another member owns (reads each whole: slow on a big store)")
      .action(action(async (c: Ctx, o: { live?: boolean; hashBlobs?: boolean }) => {
      const checks: Check[] = [];
      let bus: Bus | undefined;
      try {
        bus = openBus({ dir: c.dir });
      } catch (e) {
        checks.push({ check: "store", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "point --dir or A2A_DIR at a directory you own (or unset A2A_DIR for ~/.a2a)" });
      }
      if (bus) {
        try {
          let server: ServerReport | undefined | null;
          try {
            server = await bus.admin.serverChecks(); // undefined: a directory, which has no server
          } catch (e) {
            server = null;
            checks.push({ check: "store", level: "problem", detail: phrase(asA2AError(e), SHELL), fix: "correct --dir or A2A_DIR as the line says" });
          }
          if (server) await databaseChecks(bus, server, checks);
          else if (server === undefined) {
            const { shared, exists } = await storeChecks(bus, checks);
            await ownerChecks(bus, shared ?? bus.settings.shared, checks, c.json, !!o.hashBlobs);
            inotifyCheck(bus, checks);
            await handoffChecks(bus, exists, checks);
            await sessionCheck(bus, checks);
          }
        } finally {
          await bus.close();
        }
      }
      pathCheck(checks);
      await agentChecks(checks, !!o.live);
      const problems = checks.filter((k) => k.level === "problem");
      if (c.json) out(json({ ok: !problems.length, checks }));
      else {
        const w = Math.max(...checks.map((k) => k.check.length));
        let text = checks.map((k) => `${k.level === "ok" ? "ok     " : k.level === "note" ? "note   " : "PROBLEM"} ${k.check.padEnd(w)}  ${k.detail}${k.fix ? `\n        ${" ".repeat(w)}  fix: ${k.fix}` : ""}\n`).join("");
        if (!problems.length) text += "all good: a2a will work here\n";
        out(text);
      }
      if (problems.length) throw new A2AError("EIO", `${problems.length} problem${problems.length === 1 ? "" : "s"} found: fix ${problems.length === 1 ? "it" : "them"} as shown, then run a2a doctor again`, { data: { problems: problems.map((k) => k.check) } });
    })),
};
