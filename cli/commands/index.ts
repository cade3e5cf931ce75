// Which module defines each command, known without loading any of them: cli/main.ts reads
// the command name from argv, loads that one module (and through it only the lib/ modules it
// needs), and registers that one command with commander. Only the full listing (`a2a --help`,
// `a2a help`, no command, an unknown command) loads every group.
//
// Invariant: this module imports nothing at run time but its groups, lazily; the order of
// COMMANDS is the order of `a2a --help`. tests/e2e/startup.test.ts checks what each hot
// command loads.

import type { Command } from "commander";

export type Group = "slots" | "mail" | "search" | "topics" | "tasks" | "crew" | "leases" | "reservations" | "guard" | "presence" | "gc" | "move" | "blobs" | "mcp" | "init" | "hook" | "setup" | "doctor" | "ui" | "completion";

export const COMMANDS: Record<string, Group> = {
  start: "slots",
  publish: "slots",
  wait: "slots",
  append: "slots",
  tail: "slots",
  status: "slots",
  clear: "slots",
  watch: "slots",
  send: "mail",
  recv: "mail",
  inbox: "mail",
  thread: "mail",
  ack: "mail",
  allow: "mail",
  deny: "mail",
  policy: "mail",
  search: "search",
  pub: "topics",
  sub: "topics",
  topics: "topics",
  task: "tasks",
  crew: "crew",
  lease: "leases",
  reserve: "reservations",
  release: "reservations",
  reservations: "reservations",
  guard: "guard",
  whoami: "presence",
  peers: "presence",
  "wait-state": "presence",
  primer: "presence",
  gc: "gc",
  export: "move",
  import: "move",
  put: "blobs",
  get: "blobs",
  mcp: "mcp",
  init: "init",
  hook: "hook",
  setup: "setup",
  doctor: "doctor",
  ui: "ui",
  completion: "completion",
};

// A group module: each command as a function that adds it to the program.
export interface GroupModule {
  commands: Record<string, (program: Command) => Command>;
}

const LOAD: Record<Group, () => Promise<GroupModule>> = {
  slots: () => import("./slots"),
  mail: () => import("./mail"),
  search: () => import("./search"),
  topics: () => import("./topics"),
  tasks: () => import("./tasks"),
  crew: () => import("./crew"),
  leases: () => import("./leases"),
  reservations: () => import("./reservations"),
  guard: () => import("./guard"),
  presence: () => import("./presence"),
  gc: () => import("./gc"),
  move: () => import("./move"),
  blobs: () => import("./blobs"),
  mcp: () => import("./mcp"),
  init: () => import("./init"),
  hook: () => import("./hook"),
  setup: () => import("./setup"),
  doctor: () => import("./doctor"),
  ui: () => import("./ui"),
  completion: () => import("./completion"),
};

export const isCommand = (name: string | undefined): name is string => name !== undefined && Object.hasOwn(COMMANDS, name);

// Registers one command; its module is the only group loaded.
export async function registerOne(program: Command, name: string): Promise<Command> {
  const group = await LOAD[COMMANDS[name]]();
  return group.commands[name](program);
}

// Registers every command, in listing order.
export async function registerAll(program: Command): Promise<void> {
  const groups = [...new Set(Object.values(COMMANDS))];
  const loaded = new Map(await Promise.all(groups.map(async (g) => [g, await LOAD[g]()] as const)));
  for (const [name, g] of Object.entries(COMMANDS)) {
    const def = loaded.get(g)!.commands[name];
    if (!def) throw new Error(`cli/commands/${g}.ts does not define ${name}`);
    def(program);
  }
  for (const [g, mod] of loaded) {
    for (const name of Object.keys(mod.commands)) {
      if (COMMANDS[name] !== g) throw new Error(`cli/commands/${g}.ts defines ${name}, which COMMANDS does not route to it`);
    }
  }
}
