// Who an agent is. On the command line: `--as NAME`, else $A2A_AGENT. In `a2a mcp`:
// $A2A_AGENT, else a name derived from the working directory (the git root's basename), and
// remembered per directory so a reconnect gets the same name (lib/peers.ts adds a suffix
// only while a live peer holds the name).
//
//   ROOT/identities/HASH.json   HASH = first 16 hex of sha256(HOST "\0" CWD)
//   {"a2a":1,"host":H,"cwd":C,"names":["proj","proj-2"]}   names handed out here, in order
//
// The record is replaced atomically; two servers starting in one directory at once may each
// append a name, and the last write wins: both names stay valid, one may be forgotten.

import { existsSync, readFileSync } from "node:fs";
import { hashHex } from "../core/digest";
import { basename, dirname, join, resolve } from "node:path";
import { writeAtomic } from "../core/atomic";
import { A2AError } from "../core/errors";
import { unreadCount } from "../mail/send";
import { checkAgent, userName } from "../mail/message";
import { isValidName } from "../core/paths";
import { readPolicy, type PolicyMode } from "../mail/policy";
import { ensureDir, type Store } from "../core/config";

export type NameSource = "--as" | "A2A_AGENT" | "directory";

export interface Identity {
  name: string;
  source: NameSource;
}

// The CLI's agent name, or undefined when neither --as nor $A2A_AGENT is given.
export function optionalAgent(flag: string | undefined, env: Record<string, string | undefined>): Identity | undefined {
  if (flag !== undefined) return { name: checkAgent(flag, "--as name"), source: "--as" };
  if (env.A2A_AGENT) return { name: checkAgent(env.A2A_AGENT, "A2A_AGENT name"), source: "A2A_AGENT" };
  return undefined;
}

// The CLI's agent name; a usage error saying how to set one when there is none.
export function requireAgent(flag: string | undefined, env: Record<string, string | undefined>, what = "this command"): Identity {
  const id = optionalAgent(flag, env);
  if (!id) throw new A2AError("EUSAGE", `${what} needs to know who you are: pass --as NAME or set A2A_AGENT=NAME`);
  return id;
}

// The top of the git work tree containing `cwd` (a .git directory or worktree file), or null.
export function gitRoot(cwd: string): string | null {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

// A valid agent name made from a directory's basename: "My Project!" -> "My-Project".
export function nameFromDirectory(cwd: string): string {
  const base = basename(gitRoot(cwd) ?? resolve(cwd));
  const name = base.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+/, "").replace(/-+$/, "").slice(0, 64);
  return isValidName(name) ? name : "agent";
}

// "proj", "proj-2", "proj-3", ...
export const withSuffix = (base: string, n: number) => (n <= 1 ? base : `${base.slice(0, 120)}-${n}`);

const identityFile = (store: Store, cwd: string) =>
  join(store.root, "identities", hashHex("sha256", `${store.host}\0${resolve(cwd)}`).slice(0, 16) + ".json");

export function rememberedNames(store: Store, cwd: string): string[] {
  try {
    const r = JSON.parse(readFileSync(identityFile(store, cwd), "utf8"));
    return Array.isArray(r?.names) ? r.names.filter(isValidName) : [];
  } catch {
    return []; // none yet (or unreadable: a fresh name is harmless)
  }
}

export function rememberName(store: Store, cwd: string, name: string): void {
  const names = rememberedNames(store, cwd);
  if (names.includes(name)) return;
  ensureDir(store, join(store.root, "identities"));
  writeAtomic(store, identityFile(store, cwd), JSON.stringify({ a2a: 1, host: store.host, cwd: resolve(cwd), names: [...names, name] }) + "\n");
}

export interface WhoAmI {
  name: string;
  source: NameSource;
  host: string;
  user: string;
  cwd: string;
  git_root: string | null;
  unread: number;
  policy: PolicyMode;
  store: string;
}

export function whoami(store: Store, id: Identity, cwd: string): WhoAmI {
  const user = userName(store, process.getuid?.() ?? -1);
  return {
    name: id.name,
    source: id.source,
    host: store.host,
    user,
    cwd: resolve(cwd),
    git_root: gitRoot(cwd),
    unread: unreadCount(store, id.name),
    policy: readPolicy(store, id.name).mode,
    store: store.root,
  };
}
