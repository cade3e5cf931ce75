// What every command needs from the command line: the store (from --dir, A2A_DIR, ~/.a2a)
// and whether to print JSON. Kept apart so command modules stay parse -> call lib -> format.

import type { Command } from "commander";
import { openStore, type Store } from "../lib/core/config";

export interface Ctx {
  store: Store;
  json: boolean;
}

export function ctx(cmd: Command): Ctx {
  const o = cmd.optsWithGlobals() as { dir?: string; json?: boolean };
  return { store: openStore({ dir: o.dir }), json: !!o.json };
}
