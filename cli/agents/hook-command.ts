// The command line of an a2a hook as setup writes it into an agent's settings, and how a2a finds
// its own entries there again (a2a at any path, then `hook EVENT`): what --remove takes out and
// doctor counts. No shell parsing beyond quotes: a2a writes plain commands.
//   /path/a2a [--dir STORE] hook EVENT [--agent ID] [--wait Ns]

import { basename } from "node:path";
import type { A2ACommand, A2AEvent } from "./agent";

const EVENTS: readonly string[] = ["session-start", "user-prompt-submit", "stop", "pre-tool-use", "notification"] satisfies A2AEvent[];

export const shellQuote = (s: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// `agent`: the agent whose hook format is spoken (claude, the default, is left out).
export function hookCommand(cmd: A2ACommand, event: A2AEvent, o: { wait?: number; agent?: string } = {}): string {
  const args = [cmd.command, ...cmd.pre, "hook", event];
  if (o.agent && o.agent !== "claude") args.push("--agent", o.agent);
  if (o.wait) args.push("--wait", `${o.wait}s`);
  return args.map(shellQuote).join(" ");
}

const words = (cmd: string) => (cmd.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^['"]|['"]$/g, ""));

// The event an a2a hook command answers ("stop" for `/x/a2a --dir D hook stop --wait 5m`), or undefined.
export function a2aHookEvent(cmd: unknown): string | undefined {
  if (typeof cmd !== "string") return undefined;
  const w = words(cmd);
  if (!w.length || basename(w[0]) !== "a2a") return undefined;
  const i = w.indexOf("hook");
  return i > 0 && EVENTS.includes(w[i + 1]) ? w[i + 1] : undefined;
}
