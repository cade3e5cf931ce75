// What `a2a --help` adds after the command list: examples, the environment and the exit
// codes. Loaded only for the full listing. The variables are lib/core/config.ts's (the only
// reader of A2A_*); tests/e2e/help.test.ts checks that every one config.ts reads is here.

import type { Command } from "commander";
import { examples } from "./run";

// Each registered command's name, summary and flags (for `a2a completion`).
export interface CommandSpec {
  name: string;
  summary: string;
  options: string[]; // long and short flags, plus the global ones
}

export function commandSpecs(program: Command): CommandSpec[] {
  return program.commands.map((c) => ({
    name: c.name(),
    summary: c.summary() || c.description().split(". ")[0],
    options: [...c.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f)), "--help", "--dir"],
  }));
}

const ENV: [string, string][] = [
  ["A2A_DIR", "the store directory (default ~/.a2a; --dir wins)"],
  ["A2A_AGENT", "your agent name for mail and topics (--as wins)"],
  ["A2A_REPO", "the repository reservations belong to (default: the origin remote, else the common git directory)"],
  ["A2A_SHARED", "1: a new store is made shared with your group (a2a init --shared GROUP names the group)"],
  ["A2A_MAX_BYTES", "largest result, chunk or message, in bytes (default 1048576)"],
  ["A2A_POLL_MS", "poll interval on network filesystems, ms (default 100)"],
  ["A2A_WATCH", "auto, watch (never poll) or poll (never watch); default auto"],
  ["A2A_TOPIC_KEEP", "how long a2a gc keeps topic messages, e.g. 7d (default 30d; forever: never removed); each topic's newest stays"],
  ["A2A_PLATFORM", "portable: behave as a2a does off Linux (fs.watch, no /proc, watch and poll); for testing"],
  ["A2A_MAX_UNREAD", "unread messages one inbox accepts (default 10000)"],
  ["A2A_CLAIM_LEASE_MS", "how long a reader on another host may hold a message before it returns to unread, ms (default 30000)"],
  ["A2A_HEARTBEAT_MS", "presence heartbeat of a2a mcp, ms (default 10000)"],
  ["A2A_MCP_MAX_WAIT", "seconds one MCP tool call may block (default 100)"],
  ["A2A_MCP_PROGRESS_MS", "progress notification interval of a blocking MCP call, ms (default 10000)"],
  ["A2A_LOG", "1: a2a mcp logs one line per call on stderr"],
  ["A2A_DEBUG", "1: errors also print their cause"],
  ["A2A_DURABILITY", "fsync (default: every write survives a power cut) or none (faster, for a store in tmpfs or scratch work)"],
];

const EXIT_CODES: [string, string][] = [
  ["0", "success (also: a reader closed stdout early, as with | head)"],
  ["1", "failure: I/O, permissions, disk full; refused by the recipient's policy; inbox full; mail or a topic position left unread because stdout closed; task wait: a task is dead"],
  ["2", "usage: bad command, flag, name or value; too large; not UTF-8; a malformed claim token; an unknown --after id (nothing added)"],
  ["3", "not found: no such slot, message, queue or task; task claim: nothing claimable; crew stop/down: the crew is not up"],
  ["4", "conflict: --if-version mismatch; append to a published slot; start --exclusive on a running slot; a claim token that is no longer current; retry of a task that is not dead, cancel of a done one; a lease held by someone else; a path reserved by someone else (reserve, release); import kept records of the store's own; crew up of a crew already up"],
  ["124", "timed out: what was waited for did not happen (wait, tail -f, recv --wait, send --wait-reply, task claim --wait, task wait, lease take --wait, reserve --wait); watch and sub --follow take --timeout as a run length and exit 0"],
  ["128+N", "stopped by signal N while blocking: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; 141 when a wait's stdout reader went away first"],
];

// Two columns, the second wrapped to 80 characters under itself.
function rows(list: [string, string][]): string {
  const w = Math.max(...list.map(([k]) => k.length));
  const indent = " ".repeat(w + 4);
  return list
    .map(([k, v]) => {
      const lines = [`  ${k.padEnd(w)}  `];
      for (const word of v.split(" ")) {
        const last = lines[lines.length - 1];
        if (last.length + word.length > 80 && last.trim() !== k) lines.push(indent + word);
        else lines[lines.length - 1] = last + (last.endsWith("  ") || last === indent ? "" : " ") + word;
      }
      return lines.join("\n");
    })
    .join("\n") + "\n";
}

export const TOP_HELP =
  examples([
    'a2a start researcher "scrape prices" && a2a publish researcher "42 found"',
    "summary=$(a2a wait researcher --timeout 10m)",
    "make 2>&1 | a2a append build - ; a2a tail build --follow",
    'a2a send bob "schema changed" --as alice; a2a recv --as bob --wait',
    "a2a setup claude && a2a doctor   # Claude Code: MCP server + hooks, then check",
    "a2a ui --as alice    # the live dashboard in your browser",
    'while claim=$(a2a task claim build --wait --sh); do eval "$claim"; ...; a2a task done "$TASK_ID" "$TASK_TOKEN" ok; done',
    "a2a help wait",
  ]) +
  "\nEvery command takes --json (one JSON value, or one per line for streams) and --dir.\n" +
  "Durations (--timeout, --ttl) are seconds or a number with ms, s, m, h or d.\n" +
  "\nEnvironment:\n" +
  rows(ENV) +
  "\nExit codes:\n" +
  rows(EXIT_CODES);

export const ENV_NAMES = ENV.map(([k]) => k);
