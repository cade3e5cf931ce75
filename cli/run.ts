// The one runner of every CLI command: what a command gets (the store, --json, a stop
// signal), how it ends (output, then EOF to the reader, then teardown), and how lib's Outcome
// of a blocking call becomes an exit status. Command modules (cli/commands/*) only parse,
// call lib once and format; everything about ending lives here, once.
//
// Invariants:
// - the bus is opened from --dir / A2A_DIR / ~/.a2a on first use (lib/bus.ts), so
//   a bad store fails every command the same way, and `a2a mcp` can hand --dir on untouched;
// - a blocking command asks for `c.signal()`: from then on SIGINT, SIGTERM and SIGHUP abort
//   the lib call instead of killing the process, and the command exits 128+N (130 for
//   Ctrl-C, 143 for SIGTERM), never mistaken for a timeout (124); commands that never ask
//   keep the default action of those signals, which is the same exit status;
// - `end(outcome)` is the one mapping: done -> the value; timeout -> exit 124 with a line
//   naming what is still pending (except a run length: watch / sub --follow --timeout end
//   normally, exit 0, because they wait for nothing in particular); aborted -> 128+N;
// - teardown, whatever happened: stdout is closed first (so `$(a2a wait x)` returns as soon
//   as the value is out), then the store's watches (which can take milliseconds);
// - a reader that closed stdout early ends the command quietly, exit 0 (io.ts StdoutClosed);
//   while a command blocks, a stdout whose reader is gone (an ssh connection closed) stops it
//   the same way within a fraction of a second, written to or not (hangup.ts), watched from
//   HANGUP_ARM_MS after it started blocking.

import type { Command } from "commander";
import { openBus, type Bus } from "../lib/bus";
import { A2AError, render, type Part } from "../lib/core/errors";
import type { Outcome } from "../lib/core/outcome";
import { watchStdoutHangup } from "./hangup";
import { closeStdout, err, out, StdoutClosed } from "./io";
import { SHELL } from "./phrase";

export interface Ctx {
  readonly bus: Bus; // opened on first use
  readonly dir: string | undefined; // --dir as given (for `a2a mcp`, which opens its own store)
  readonly json: boolean;
  readonly quiet: boolean; // -q: no confirmation line (errors and requested output still print)
  signal(): AbortSignal; // arms the stop signals; call once, before blocking
  // Prints a command's confirmation ("published x (version 2, 5B)"): the record as JSON under
  // --json, nothing under -q, else the line.
  confirm(value: unknown, line: string): void;
}

const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
const SIGPIPE = 13;
// How long a command blocks before its stdout is watched for a reader gone (cli/hangup.ts looks
// every 200 ms once armed).
const HANGUP_ARM_MS = 50;
// Commands whose output is a stream that waits for nothing in particular: a reader done with it
// is their normal end (`a2a watch | grep -m1 x`), exit 0. Every other blocking command waits
// for something a script acts on (`ssh devbox 'a2a wait ready && deploy'`): its reader gone
// before it came is exit 141, 128+SIGPIPE, as the shell reports a writer killed by a closed
// pipe, so `&& deploy` never runs on a wait that did not end.
const STREAMS = new Set(["watch", "sub", "tail", "ui"]);
// "stdout gone": no signal, the reader of stdout went away while the command blocked.
type SignalName = keyof typeof SIGNALS | "stdout gone";

// Thrown by `end` when a signal stopped the wait; caught by the runner only.
class Interrupted {
  constructor(
    readonly signal: SignalName,
    readonly note: Part[] | undefined,
  ) {}
}

class Context implements Ctx {
  #bus: Bus | undefined;
  #abort: AbortController | undefined;
  unwatch: () => void = () => {};
  readonly dir: string | undefined;
  readonly json: boolean;
  readonly quiet: boolean;
  constructor(cmd: Command) {
    const o = cmd.optsWithGlobals() as { dir?: string; json?: boolean; quiet?: boolean };
    this.dir = o.dir;
    this.json = !!o.json;
    this.quiet = !!o.quiet;
  }
  confirm(value: unknown, line: string): void {
    if (this.json) out(JSON.stringify(value) + "\n");
    else if (!this.quiet) out(line.endsWith("\n") ? line : line + "\n");
  }
  get bus(): Bus {
    return (this.#bus ??= openBus({ dir: this.dir }));
  }
  get opened(): Bus | undefined {
    return this.#bus;
  }
  signal(): AbortSignal {
    if (!this.#abort) {
      const ac = (this.#abort = new AbortController());
      for (const sig of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) process.once(sig, () => ac.abort(sig));
      // Watching stdout costs bun:ffi and a dlopen (~5% of a start-up): armed once the command
      // has blocked a moment, so a wait that finds its answer at once never pays for it.
      const arm = setTimeout(() => (this.unwatch = watchStdoutHangup(() => ac.abort("stdout gone"))), HANGUP_ARM_MS);
      this.unwatch = () => clearTimeout(arm);
    }
    return this.#abort.signal;
  }
  get stoppedBy(): SignalName {
    const r = this.#abort?.signal.reason;
    return r === "stdout gone" || (typeof r === "string" && r in SIGNALS) ? (r as SignalName) : "SIGTERM";
  }
}

export interface Endings<T> {
  // What a timeout says (exit 124), from what was still pending; "ok" for a run length.
  timeout: ((pending: string[], value: T) => Part[]) | "ok";
  // An optional note when a signal stopped it (say what happens to what was left behind).
  aborted?: (pending: string[], value: T) => Part[];
}

// The one mapping of lib's Outcome for the shell (see the header).
export function end<T>(c: Ctx, o: Outcome<T>, say: Endings<T>): T {
  if (o.kind === "done") return o.value;
  if (o.kind === "timeout") {
    if (say.timeout === "ok") return o.value;
    throw new A2AError("ETIMEDOUT", say.timeout(o.pending, o.value), { data: { pending: o.pending } });
  }
  throw new Interrupted((c as Context).stoppedBy, say.aborted?.(o.pending, o.value));
}

// Wraps a command's body as its commander action: (ctx, ...arguments, options).
export function action(run: (c: Ctx, ...args: any[]) => unknown) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const c = new Context(cmd);
    try {
      await run(c, ...args.slice(0, -1));
    } catch (e) {
      if (e instanceof Interrupted) {
        // Nobody reads what a command whose stdout is gone says: it ends as a closed pipe does.
        if (e.signal === "stdout gone") process.exitCode = STREAMS.has(cmd.name()) ? 0 : 128 + SIGPIPE;
        else {
          if (e.note) err(`a2a: ${render(e.note, SHELL)}\n`);
          process.exitCode = 128 + SIGNALS[e.signal];
        }
      } else if (!(e instanceof StdoutClosed)) throw e;
    } finally {
      c.unwatch();
      closeStdout();
      if (c.opened) await c.opened.close();
    }
  };
}

// The "Examples:" block of a command's help (and of the top-level help).
export function examples(lines: string[]): string {
  return "\nExamples:\n" + lines.map((l) => "  $ " + l).join("\n") + "\n";
}

export interface Doc {
  summary: string; // one line, in the command list of `a2a --help`
  description: string; // what it does, what it prints, how it ends: the head of `a2a CMD --help`
  examples: string[];
  json: string; // what --json prints: every command takes --json
  quiet?: true; // the command prints a confirmation line, which -q/--quiet silences
}

// A command with its documentation, --json, and commander's errors routed to cli/main.ts.
export function command(program: Command, name: string, doc: Doc): Command {
  const cmd = program.command(name).summary(doc.summary).description(doc.description).option("--json", doc.json);
  // Every command takes -q, so a script can pass it everywhere; it silences confirmations only.
  cmd.option("-q, --quiet", doc.quiet ? "print no confirmation line (errors still go to stderr)" : "accepted everywhere: this command prints no confirmation line to silence");
  return cmd
    .addHelpText("after", examples(doc.examples))
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
}
