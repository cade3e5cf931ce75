#!/usr/bin/env bun
// Entry point of the `a2a` binary: a thin commander front end over lib/. Start-up cost is
// what a shell loop pays on every call, so heavy modules load lazily (the MCP SDK only in
// `a2a mcp`) and `--version` answers before commander is even loaded.
//
// Every failure ends here as one line on stderr, "a2a: <what happened>: <what to do>", and
// an exit status from lib/core/errors.ts; never a stack trace.

import pkg from "../package.json" with { type: "json" };
import { A2AError, EXIT, asA2AError, phrase } from "../lib/core/errors";
import { SHELL } from "./phrase";
import { err, out } from "./io";

const argv = process.argv.slice(2);

function fail(e: unknown): never {
  const a = asA2AError(e);
  err(`a2a: ${phrase(a, SHELL)}\n`);
  if (process.env.A2A_DEBUG /* read before any Store exists */ && a.cause) err(String((a.cause as Error)?.stack ?? a.cause) + "\n");
  process.exit(a.exitCode);
}

async function main(): Promise<void> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    return out(pkg.version + "\n");
  }
  const { Command, CommanderError } = await import("commander");
  const program = new Command();
  program
    .name("a2a")
    .description("A coordination bus for AI agents on a shared directory: publish, wait, stream, message.\nStore: --dir, else $A2A_DIR, else ~/.a2a.")
    .version(pkg.version, "-V, --version")
    .option("--dir <path>", "store directory (default: $A2A_DIR or ~/.a2a)")
    .enablePositionalOptions(false)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => {} }); // commander's own error text is replaced below

  const { registerSlotCommands } = await import("./slots");
  registerSlotCommands(program);
  const { registerMessageCommands } = await import("./messages");
  registerMessageCommands(program);
  program
    .command("mcp")
    .summary("run the MCP stdio server (claude mcp add a2a -- a2a mcp)")
    .action(async (_o, cmd) => {
      const { runMcpServer } = await import("./mcp/server");
      await runMcpServer(cmd.optsWithGlobals().dir);
    });

  // Every subcommand exits through commander's override too, so unknown options are caught.
  for (const c of program.commands) c.exitOverride().configureOutput({ writeErr: () => {} });

  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0 || e.code === "commander.helpDisplayed" || e.code === "commander.version") process.exit(0);
      // `a2a` with no command: commander's help went to the silenced writeErr; show it, as a usage error.
      if (e.code === "commander.help") {
        err(program.helpInformation());
        process.exit(EXIT.USAGE);
      }
      const what = e.message.replace(/^error:\s*/, "").replace(/\n[\s\S]*$/, "");
      fail(new A2AError("EUSAGE", `${what}: see a2a --help or a2a COMMAND --help`));
    }
    throw e;
  }
}

main().then(
  () => process.exit(process.exitCode ?? EXIT.OK),
  fail,
);
