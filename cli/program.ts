// The a2a program as commander sees it: its name, description, version and the one global
// option, --dir. Commander itself is passed in: it is loaded only when a command needs it
// (cli/dispatch.ts; cli/fast.ts runs plain commands without it).
import type { Command } from "commander";
import pkg from "../package.json" with { type: "json" };

export function newProgram(C: typeof Command): Command {
  return new C()
    .name("a2a")
    .description("A coordination bus for AI agents on a shared directory: publish, wait, stream, message.\nStore: --dir, else $A2A_DIR, else ~/.a2a.")
    .version(pkg.version, "-V, --version")
    .option("--dir <path>", "store directory (default: $A2A_DIR or ~/.a2a)")
    .enablePositionalOptions(false)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => {} }); // commander's own error text is replaced by cli/dispatch.ts
}
