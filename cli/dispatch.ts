// What runs a command, once cli/main.ts has ruled out --version: a thin commander front end
// over lib/. Start-up cost is what a shell loop pays on every call, so nothing is built
// before the command is known: the command name is read from argv and only its module
// (cli/commands/<group>.ts, and through it the lib/ modules it needs) is loaded. A plain argv
// then runs without commander at all (cli/fast.ts); anything else (help, a usage error, an
// unusual form) builds commander for that one command plus the global options. The full
// listing (`a2a --help`, `a2a help`, no command, an unknown command, for its "did you mean")
// builds every command. tests/e2e/startup.test.ts checks what each hot command loads.
//
// Every failure ends here as one line on stderr, "a2a: <what happened>: <what to do>", and
// an exit status from lib/core/errors.ts; never a stack trace.

import type { Command } from "commander";
import { A2AError, EXIT, asA2AError, phrase } from "../lib/core/errors";
import { isCommand, registerAll, registerOne } from "./commands/index";
import { fastCall, Recorder } from "./fast";
import { newProgram } from "./program";
import { inertLine } from "./inert";
import { err, StdoutClosed } from "./io";
import { SHELL } from "./phrase";

const argv = process.argv.slice(2);

// --json anywhere before a `--` asks for machine output, errors included: one JSON line on
// stderr, {"error": {"code", "message", "exit"}} (plus "data" when there are facts). Read from
// argv, not from commander, so that usage errors commander itself raises are JSON too.
const jsonErrors = (() => {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
})();

function fail(e: unknown): never {
  if (e instanceof StdoutClosed) process.exit(EXIT.OK);
  const a = asA2AError(e);
  if (jsonErrors) {
    const error = { code: a.code, message: phrase(a, SHELL), exit: a.exitCode, ...(Object.keys(a.data).length ? { data: a.data } : {}) };
    err(JSON.stringify({ error }) + "\n");
  } else err(`a2a: ${inertLine(phrase(a, SHELL))}\n`); // its facts (a pattern, a reason) may hold control characters
  if (process.env.A2A_DEBUG /* read before any Store exists */ && a.cause) err(String((a.cause as Error)?.stack ?? a.cause) + "\n");
  process.exit(a.exitCode);
}

// The command argv names, skipping the global options before it (--dir PATH, --dir=PATH);
// undefined when the full listing is wanted. `help NAME` is NAME's help (commander's own
// help command serves it); `help BOGUS` is parsed as `BOGUS`, an unknown command.
function route(args: string[]): { one?: string; args: string[] } {
  let i = 0;
  while (args[i] === "--dir" || args[i]?.startsWith("--dir=")) i += args[i] === "--dir" ? 2 : 1;
  const name = args[i];
  if (isCommand(name)) return { one: name, args };
  if (name === "help" && args[i + 1] !== undefined && !args[i + 1].startsWith("-")) {
    const target = args[i + 1];
    // `help task claim` is `task claim --help` (commander's help command would show the group's).
    return isCommand(target) ? { one: target, args: [...args.slice(0, i), ...args.slice(i + 1), "--help"] } : { args: [...args.slice(0, i), target] };
  }
  return { args };
}

// The command whose help answers a usage error: `a2a task claim` for `a2a task claim --bogus`,
// the group for `a2a task --bogus`, the program without a command.
function helpFor(program: Command, one: string | undefined, args: string[]): string {
  if (!one) return "a2a --help";
  const group = program.commands.find((c) => c.name() === one);
  const after = args.slice(args.indexOf(one) + 1).find((a) => !a.startsWith("-"));
  const sub = after && group?.commands.find((c) => c.name() === after || c.aliases().includes(after));
  return sub ? `a2a ${one} ${sub.name()} --help` : `a2a ${one} --help`;
}

// commander's "error: unknown command 'pubish'\n(Did you mean publish?)" as one line.
function usageLine(message: string): string {
  const [first, ...rest] = message.replace(/^error:\s*/, "").split("\n");
  const hint = /\(Did you mean (.+)\?\)/.exec(rest.join(" "));
  return hint ? `${first} (did you mean ${hint[1]}?)` : first;
}

// Runs command `name` through cli/fast.ts if its argv is plain; false when commander must.
async function runFast(name: string, args: string[]): Promise<boolean> {
  const recorder = new Recorder();
  try {
    await registerOne(recorder as unknown as Command, name);
  } catch {
    return false; // it uses a part of commander the recorder does not know
  }
  const call = fastCall(recorder, name, args);
  if (!call) return false;
  await call.fn(...call.args);
  return true;
}

async function main(): Promise<void> {
  const r = route(argv);
  if (r.one && (await runFast(r.one, r.args))) return;
  const { Command, CommanderError } = await import("commander");
  const program = newProgram(Command);
  if (r.one) await registerOne(program, r.one);
  else {
    await registerAll(program);
    program.addHelpText("after", (await import("./help")).TOP_HELP);
  }

  try {
    await program.parseAsync(r.args, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0 || e.code === "commander.helpDisplayed" || e.code === "commander.version") process.exit(0);
      // `a2a` with no command, or `a2a task` with no subcommand: commander's help went to the
      // silenced writeErr; show that command's help, as a usage error.
      if (e.code === "commander.help") {
        err((program.commands.find((c) => c.name() === r.one) ?? program).helpInformation());
        process.exit(EXIT.USAGE);
      }
      // The help to read is the command's own when there is one.
      fail(new A2AError("EUSAGE", `${usageLine(e.message)}: see ${helpFor(program, r.one, r.args)}`, { data: { command: r.one ?? null } }));
    }
    throw e;
  }
}

await main().then(
  () => process.exit(process.exitCode ?? EXIT.OK),
  fail,
);
