// Who an agent is: a name the caller gives, else $A2A_AGENT, else the session's name
// (lib/presence/session-name.ts actingAgent: every command that acts as someone, and whoami).
// In `a2a mcp`: $A2A_AGENT, else a name derived from the working directory (the git root's basename), and
// remembered per directory so a reconnect gets the same name (lib/presence/peers.ts adds a suffix
// only while a live peer holds the name). `whoami` itself is lib/sessions/whoami.ts.
//
//   {"a2a":1,"host":H,"cwd":C,"names":["proj","proj-2"]}   names handed out here, in order
//   (kept by the engine, lib/presence/storage.ts; on files identities/HASH.json: FILE-ENGINE.md §9)
//
// The record is replaced whole; two servers starting in one directory at once may each
// append a name, and the last write wins: both names stay valid, one may be forgotten.

import { gitRoot } from "./repo";
import { basename, resolve } from "node:path";
import { type Store } from "../core/config";
import { checkAgent, isValidName } from "../core/names";
import { presenceStorage } from "./storage";

// "given": by the caller (the CLI's --as); "session": the name the `a2a mcp` of the calling
// Claude Code session holds (session-name.ts); "directory": what a2a mcp started there takes.
export type NameSource = "given" | "A2A_AGENT" | "directory" | "session";

export interface Identity {
  name: string;
  source: NameSource;
}

// The name given, else $A2A_AGENT; undefined when neither is (an anonymous topic post).
export function optionalAgent(store: Store, given: string | undefined): Identity | undefined {
  if (given !== undefined) return { name: checkAgent(given, "agent name"), source: "given" };
  if (store.agent) return { name: checkAgent(store.agent, "A2A_AGENT name"), source: "A2A_AGENT" };
  return undefined;
}

export { gitRoot };

// A valid agent name made from a directory's basename: "My Project!" -> "My-Project".
export function nameFromDirectory(cwd: string): string {
  const base = basename(gitRoot(cwd) ?? resolve(cwd));
  const name = base.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+/, "").replace(/-+$/, "").slice(0, 64);
  return isValidName(name) ? name : "agent";
}

// "proj", "proj-2", "proj-3", ...
export const withSuffix = (base: string, n: number) => (n <= 1 ? base : `${base.slice(0, 120)}-${n}`);

export async function rememberedNames(store: Store, cwd: string): Promise<string[]> {
  return (await presenceStorage(store).remembered(store.host, resolve(cwd))).filter(isValidName);
}

export async function rememberName(store: Store, cwd: string, name: string): Promise<void> {
  const names = await rememberedNames(store, cwd);
  if (names.includes(name)) return;
  await presenceStorage(store).remember(store.host, resolve(cwd), [...names, name]);
}
