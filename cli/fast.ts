// The fast path: a command run without commander, whose load alone costs ~3 ms of every
// start-up (about 70% of a bare Bun start), when its argv is plain.
//
// The command's module adds itself to a Recorder instead of a commander program: the
// recorder notes what commander would be told (the arguments, the options and their
// defaults, the action) and nothing else. The argv is then parsed against that record, and
// the action is called exactly as commander would call it: (...arguments, options, command).
//
// Invariants:
// - one definition: commands are written once, for commander; the recorder reads the same
//   calls, so the two parsers cannot disagree about what a command takes;
// - no usage message ever comes from here: anything the recorder or the parser does not fully
//   understand (a builder call it does not know, an unknown or repeated-short flag, a missing
//   or excess argument, --help, a flag value that is missing) makes `fastCall` return
//   undefined, and cli/dispatch.ts gives the argv to commander, which reports it;
// - tests/unit/fast.test.ts parses a corpus of argv for every command both ways and checks
//   the action gets the same call, and tests/e2e/startup.test.ts that hot commands do not
//   load commander.

import type { Command } from "commander";

interface Opt {
  short?: string; // "-q"
  long: string; // "--if-version"
  key: string; // "ifVersion"
  takesValue: boolean;
  negate: boolean; // --no-x: x is true unless given
  parse?: (value: string, previous: unknown) => unknown; // commander's parseArg
  dflt?: unknown;
}

interface Arg {
  required: boolean;
  variadic: boolean;
  dflt?: unknown;
}

type ActionFn = (...args: unknown[]) => unknown;

// Records the subset of commander's builder that cli/commands/* use. A method it lacks throws
// (TypeError) when a command calls it, and the command then goes to commander.
export class Recorder {
  readonly children = new Map<string, Recorder>();
  readonly args: Arg[] = [];
  readonly opts: Opt[] = [];
  fn: ActionFn | undefined;
  plain = true; // false: something here only commander can do (a custom parser, a negation)

  command(name: string): Recorder {
    const r = new Recorder();
    this.children.set(name, r);
    return r;
  }
  summary(): this {
    return this;
  }
  description(): this {
    return this;
  }
  addHelpText(): this {
    return this;
  }
  exitOverride(): this {
    return this;
  }
  configureOutput(): this {
    return this;
  }
  action(fn: ActionFn): this {
    this.fn = fn;
    return this;
  }

  argument(spec: string, _desc?: string, dflt?: unknown): this {
    const m = /^([<[])[\w-]+(\.\.\.)?[>\]]$/.exec(spec);
    if (!m || typeof dflt === "function") this.plain = false;
    else this.args.push({ required: m[1] === "<", variadic: !!m[2], dflt });
    return this;
  }

  // option(flags, description, [parseArg], [default]), as commander takes them.
  option(flags: string, _desc?: string, third?: unknown, fourth?: unknown): this {
    const m = /^(?:(-\w), )?(--[a-z][\w-]*)(?: <[\w-]+>)?$/.exec(flags);
    if (!m) {
      this.plain = false; // optional or variadic values: commander's
      return this;
    }
    const negate = m[2].startsWith("--no-");
    const key = m[2].slice(negate ? 5 : 2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const parse = typeof third === "function" ? (third as Opt["parse"]) : undefined;
    const given = parse ? fourth : third;
    const dflt = negate && given === undefined ? true : given;
    this.opts.push({ short: m[1], long: m[2], key, takesValue: flags.includes("<"), negate, parse, dflt });
    return this;
  }
}

export interface FastCall {
  fn: ActionFn;
  args: unknown[]; // what commander would pass the action: ...arguments, options, command
}

// Reads `flag` at tokens[i] (as "--flag", "--flag=v" or "-f"); the new index, or -1 if it is
// not plain.
function takeOption(o: Opt, tokens: string[], i: number, inline: string | undefined, into: Record<string, unknown>): number {
  if (!o.takesValue) {
    if (inline !== undefined) return -1;
    into[o.key] = !o.negate;
    return i;
  }
  const v = inline ?? tokens[i + 1];
  if (v === undefined) return -1;
  try {
    into[o.key] = o.parse ? o.parse(v, o.key in into ? into[o.key] : o.dflt) : v;
  } catch {
    return -1; // the parser refused it: commander says how
  }
  return inline === undefined ? i + 1 : i;
}

// The action call commander would make for `tokens` (argv after the program name), given the
// program's `recorder` with the one command `name` added; undefined when it is not plain.
export function fastCall(recorder: Recorder, name: string, tokens: string[]): FastCall | undefined {
  const globals: Record<string, unknown> = {};
  let i = 0;
  // Leading global options, then the command name, then (for a group) the subcommand name.
  for (; tokens[i] === "--dir" || tokens[i]?.startsWith("--dir="); i++) {
    const eq = tokens[i].indexOf("=");
    if (eq < 0 && tokens[i + 1] === undefined) return undefined;
    globals.dir = eq < 0 ? tokens[++i] : tokens[i].slice(eq + 1);
  }
  if (tokens[i++] !== name) return undefined;
  let cmd = recorder.children.get(name);
  let leaf = name; // the command's own name, as commander's cmd.name() gives it
  while (cmd?.children.size) cmd = cmd.children.get((leaf = tokens[i++]));
  if (!cmd?.fn || !cmd.plain) return undefined;

  const opts: Record<string, unknown> = {};
  const positional: string[] = [];
  for (let optionsEnd = false; i < tokens.length; i++) {
    const t = tokens[i];
    if (optionsEnd || t === "-" || !t.startsWith("-")) {
      positional.push(t);
      continue;
    }
    if (t === "--") {
      optionsEnd = true;
      continue;
    }
    const eq = t.startsWith("--") ? t.indexOf("=") : -1;
    const flag = eq < 0 ? t : t.slice(0, eq);
    const inline = eq < 0 ? undefined : t.slice(eq + 1);
    if (flag === "--dir") {
      const v = inline ?? tokens[i + 1];
      if (v === undefined) return undefined;
      globals.dir = v;
      if (inline === undefined) i++;
      continue;
    }
    const o = cmd.opts.find((x) => x.long === flag || x.short === flag);
    if (!o) return undefined; // unknown, --help, a cluster of short flags: commander's to say
    i = takeOption(o, tokens, i, inline, opts);
    if (i < 0) return undefined;
  }

  const args: unknown[] = [];
  let k = 0;
  for (const a of cmd.args) {
    if (a.variadic) {
      const rest = positional.slice(k);
      k = positional.length;
      if (a.required && !rest.length) return undefined;
      args.push(rest.length ? rest : a.dflt !== undefined ? a.dflt : []);
    } else if (k < positional.length) args.push(positional[k++]);
    else if (a.required) return undefined;
    else args.push(a.dflt);
  }
  if (k < positional.length) return undefined; // excess arguments: commander's error
  for (const o of cmd.opts) if (o.dflt !== undefined && !(o.key in opts)) opts[o.key] = o.dflt;

  const command = { name: () => leaf, opts: () => opts, optsWithGlobals: () => ({ ...globals, ...opts }) };
  return { fn: cmd.fn, args: [...args, opts, command as unknown as Command] };
}
