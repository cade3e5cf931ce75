// What every contract test file shares: a fresh store per test on the engine under test, and
// the few helpers the rules need. Only the Bus is used (engines.ts says why).
import { afterEach, beforeEach, expect } from "bun:test";
import type { Bus } from "../../lib/bus";
import { A2AError } from "../../lib/core/errors";
import type { Engine, OpenedStore, Settings } from "./engines";

export interface PerTest {
  readonly bus: Bus; // the test's store, opened with no settings
  reopen(env?: Settings): Bus; // another process's view of it
  open(env: Settings): Promise<OpenedStore>; // another fresh store, with these settings (disposed after the test)
}

// Opens a fresh store before each test of the enclosing describe and disposes of it after.
export function perTest(engine: Engine): PerTest {
  let cur: OpenedStore | undefined;
  const extra: OpenedStore[] = [];
  beforeEach(async () => {
    cur = await engine.open();
  });
  afterEach(async () => {
    for (const o of [...extra.splice(0), cur]) await o?.dispose();
    cur = undefined;
  });
  return {
    get bus() {
      return cur!.bus;
    },
    reopen: (env) => cur!.reopen(env),
    async open(env) {
      const o = await engine.open(env);
      extra.push(o);
      return o;
    },
  };
}

// The A2AError `p` rejects with; fails the test when it resolves or rejects with anything else.
export async function refusal(p: Promise<unknown>): Promise<A2AError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(A2AError);
    return e as A2AError;
  }
  throw new Error("expected a refusal, got none");
}

// The code and exit status of a refusal, for one exact comparison.
export const codeOf = (e: A2AError) => ({ code: e.code, exit: e.exitCode });

// Resolves once the wall clock is past unix time `sec` (records keep times in seconds with
// millisecond fractions): for a TTL, where no event announces the instant it runs out. It
// waits for exactly that instant, not for a guessed while.
export async function past(sec: number): Promise<void> {
  while (Date.now() <= sec * 1000) await Bun.sleep(Math.max(1, Math.ceil(sec * 1000 - Date.now()) + 1));
}

// Waits generously: the machine is shared; a wait that should end early ends on its event.
export const BOUND_MS = 30_000;

// a2a export of `from` loaded into `to` (lib/move/), as the bus does it on either engine: what
// the import reports, and the export's text.
export async function move(from: Bus, to: Bus): Promise<{ report: Awaited<ReturnType<Bus["move"]["importStore"]>>; text: string }> {
  const lines: string[] = [];
  await from.move.exportStore((l) => void lines.push(l));
  const text = lines.join("");
  const report = await to.move.importStore({ open: async function* () { yield Buffer.from(text, "utf8"); }, again: true });
  return { report, text };
}

// The import's counts of `kind` as {imported, already, kept}.
export const countsOf = (r: Awaited<ReturnType<Bus["move"]["importStore"]>>, kind: keyof Awaited<ReturnType<Bus["move"]["importStore"]>>["counts"]) => r.counts[kind];
