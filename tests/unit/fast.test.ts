// cli/fast.ts against commander: for every command, a corpus of argv built from its own
// definition (each argument filled or not, each option in each spelling, --dir before and
// after, `--`) is parsed both ways, and wherever the fast path takes an argv the action must
// get exactly the call commander would make. The plain forms must be taken (or the fast
// path would be dead code), and the forms left to commander (unknown flags, --help, missing or
// excess arguments) must not be.
import { describe, expect, test } from "bun:test";
import { Command, CommanderError } from "commander";
import { COMMANDS, registerAll, registerOne } from "../../cli/commands/index";
import { fastCall, Recorder } from "../../cli/fast";
import { newProgram } from "../../cli/program";

interface Call {
  args: unknown[];
  opts: Record<string, unknown>;
}

// Commander's call for `tokens`, with every action replaced by a recorder of its arguments.
async function commanderCall(tokens: string[]): Promise<Call | "error"> {
  let got: Call | undefined;
  const original = Command.prototype.action;
  Command.prototype.action = function (this: Command) {
    return original.call(this, (...a: unknown[]) => {
      const cmd = a[a.length - 1] as Command;
      got = { args: a.slice(0, -2), opts: { ...cmd.optsWithGlobals() } };
    });
  };
  try {
    const program = newProgram(Command);
    await registerAll(program);
    for (const c of program.commands) for (const s of [c, ...c.commands]) s.exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
    await program.parseAsync(tokens, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) return "error";
    throw e;
  } finally {
    Command.prototype.action = original;
  }
  return got ?? "error";
}

async function recorded(name: string): Promise<Recorder> {
  const r = new Recorder();
  await registerOne(r as unknown as Command, name);
  return r;
}

function fastOf(r: Recorder, name: string, tokens: string[]): Call | undefined {
  const c = fastCall(r, name, tokens);
  if (!c) return undefined;
  const cmd = c.args[c.args.length - 1] as Command;
  return { args: c.args.slice(0, -2), opts: { ...cmd.optsWithGlobals() } };
}

// Every leaf command as its path of names ("publish", "task claim") with its record.
async function leaves(): Promise<{ path: string[]; rec: Recorder; root: Recorder }[]> {
  const out: { path: string[]; rec: Recorder; root: Recorder }[] = [];
  for (const name of Object.keys(COMMANDS)) {
    const root = await recorded(name);
    const walk = (path: string[], r: Recorder) => (r.children.size ? [...r.children].forEach(([n, c]) => walk([...path, n], c)) : out.push({ path, rec: r, root }));
    walk([name], root.children.get(name)!);
  }
  return out;
}

// Plain argv for a command: its arguments in each arity, then each option spelled each way.
function corpus(path: string[], rec: Recorder): string[][] {
  const base: string[] = [];
  const full: string[] = [];
  rec.args.forEach((a, i) => {
    if (a.required) base.push(`arg${i}`);
    full.push(...(a.variadic ? [`v${i}a`, `v${i}b`, `v${i}c`] : [`arg${i}`]));
  });
  const out: string[][] = [[...path, ...base], [...path, ...full], ["--dir", "/tmp/d1", ...path, ...full], ["--dir=/tmp/d2", ...path, ...full, "--dir", "/tmp/d3"]];
  if (rec.args.length) out.push([...path, "--", ...full.slice(0, -1), "-dash-after-double-dash"]);
  if (rec.args.length) out.push([...path, "-", ...full.slice(1)]);
  for (const o of rec.opts) {
    if (o.takesValue) {
      out.push([...path, ...full, o.long, "val"], [...path, `${o.long}=v=al`, ...full], [...path, ...full, o.long, "first", o.long, "last"]);
      if (o.short) out.push([...path, o.short, "sv", ...full]);
    } else {
      out.push([...path, o.long, ...full]);
      if (o.short) out.push([...path, ...full, o.short]);
    }
  }
  out.push([...path, ...full, ...rec.opts.flatMap((o) => (o.takesValue ? [o.long, "all"] : [o.long]))]);
  return out;
}

// Argv the fast path must leave to commander.
function leftToCommander(path: string[], rec: Recorder): string[][] {
  const full = rec.args.flatMap((a, i) => (a.variadic ? [`v${i}`] : [`arg${i}`]));
  const out = [[...path, ...full, "--bogus"], [...path, "--help"], [...path, ...full, "-h"], [...path, ...full, "--dir"]];
  if (rec.args.some((a) => a.required)) out.push([...path]);
  if (!rec.args.some((a) => a.variadic)) out.push([...path, ...full, "excess"]);
  for (const o of rec.opts) if (o.takesValue) out.push([...path, ...full, o.long]);
  for (const o of rec.opts) if (!o.takesValue) out.push([...path, ...full, `${o.long}=x`]);
  return out;
}

describe("the fast path parses as commander does", () => {
  test("every plain argv of every command: the same action call; commander's forms are left to it", async () => {
    const all = await leaves();
    expect(all.length).toBeGreaterThan(40); // every command, task and lease subcommands included
    let taken = 0;
    for (const { path, rec, root } of all) {
      expect({ path, plain: rec.plain, action: !!rec.fn }).toEqual({ path, plain: true, action: true });
      for (const tokens of corpus(path, rec)) {
        const fast = fastOf(root, path[0], tokens);
        const slow = await commanderCall(tokens);
        if (fast === undefined) {
          // Only an argv commander refuses may be declined (there, commander says why).
          expect({ tokens, slow }).toEqual({ tokens, slow: "error" });
          continue;
        }
        taken++;
        expect({ tokens, call: fast }).toEqual({ tokens, call: slow as Call });
      }
      for (const tokens of leftToCommander(path, rec)) {
        expect({ tokens, fast: fastOf(root, path[0], tokens) }).toEqual({ tokens, fast: undefined });
      }
    }
    expect(taken).toBeGreaterThan(300);
  });

  test("the hot commands in the forms scripts use are taken", async () => {
    const cases = [
      ["publish", "r", "42"], ["publish", "r", "--if-version", "0", "-q"], ["wait", "a", "b", "--timeout", "10s"], ["status", "--json"],
      ["send", "bob", "hi", "--as", "alice"], ["recv", "--as", "bob", "--wait"], ["append", "build", "--lines"], ["task", "claim", "q", "--wait", "--sh"],
    ];
    for (const tokens of cases) {
      const root = await recorded(tokens[0]);
      expect({ tokens, taken: fastOf(root, tokens[0], tokens) !== undefined }).toEqual({ tokens, taken: true });
    }
  });

  test("a builder call the recorder does not know sends the command to commander", () => {
    const r = new Recorder();
    const define = (p: any) => p.command("odd").alias("o").action(() => {});
    expect(() => define(r)).toThrow(TypeError);
    const optional = new Recorder();
    optional.command("x").option("--color [when]", "optional value").action(() => {});
    expect(fastCall(optional, "x", ["x"])).toBeUndefined();
  });
});
