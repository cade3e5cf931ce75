// The contract of reservations on paths (docs/PROTOCOL.md, "Reservations on paths"), on every
// engine, through the Bus only: all or nothing; a pattern overlapping another holder's is
// refused unless both are shared; reserving again renews; release by the holder; expiry by TTL;
// a waiting reserve is woken by a change through another handle; of racers for overlapping
// patterns exactly one wins.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "../../lib/bus";
import { tempDir } from "../harness/run";
import { enginesFor } from "./engines";
import { BOUND_MS, codeOf, past, perTest, refusal } from "./support";

setDefaultTimeout(60_000);

// A directory outside any git work tree: the repository is the directory itself.
let cwd = "";
let scratch: ReturnType<typeof tempDir>;
beforeAll(() => {
  scratch = tempDir("a2a-contract-repo-");
  cwd = scratch.path;
  mkdirSync(join(cwd, "src"));
});
afterAll(() => scratch[Symbol.dispose]());

const held = async (bus: Bus, paths?: string[]) => (await bus.reservations.list({ cwd, paths })).reservations.map((r) => [r.pattern, r.holder, r.exclusive]);

async function reserve(bus: Bus, patterns: string[], as: string, more: { ttlSec?: number; shared?: boolean; reason?: string } = {}) {
  const o = await bus.reservations.reserve(patterns, { as, cwd, ...more });
  expect(o.kind).toBe("done");
  return o.value!;
}

for (const engine of enginesFor("reservations")) {
  describe(`${engine.name}: reservations`, () => {
    const t = perTest(engine);

    test("an overlapping pattern is refused to another holder (exit 4) naming holder, pattern, reason and expiry; the store is left as it was", async () => {
      const [mine] = await reserve(t.bus, ["src/api/**"], "alice", { reason: "refactoring the api", ttlSec: 60 });
      expect({ pattern: mine.pattern, holder: mine.holder, exclusive: mine.exclusive, ttl: mine.expires_at - mine.created_at }).toEqual({ pattern: "src/api/**", holder: "alice", exclusive: true, ttl: 60 });
      const before = await t.bus.reservations.list({ cwd });
      for (const p of ["src/api/x.ts", "src", "src/*/x.ts", "**/*.ts"]) {
        const e = await refusal(t.reopen().reservations.reserve([p], { as: "bob", cwd }));
        expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
        expect(e.data.conflicts).toEqual([{ pattern: p, holder: "alice", held: "src/api/**", exclusive: true, reason: "refactoring the api", expires_at: mine.expires_at }]);
        expect(e.message).toContain("alice holds src/api/** (exclusive: refactoring the api) until ");
      }
      expect(await t.bus.reservations.list({ cwd })).toEqual(before);
      // `*` stays within one segment: these do not overlap src/api/**.
      await reserve(t.reopen(), ["*.ts", "src/*.ts", "src/apis"], "bob");
      expect(await held(t.bus)).toEqual([["*.ts", "bob", true], ["src/*.ts", "bob", true], ["src/api/**", "alice", true], ["src/apis", "bob", true]]);
    });

    test("all or nothing: one refused pattern reserves none of the others", async () => {
      await reserve(t.bus, ["b/x"], "alice");
      const e = await refusal(t.reopen().reservations.reserve(["a", "b", "c/**"], { as: "bob", cwd }));
      expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await held(t.bus)).toEqual([["b/x", "alice", true]]);
      expect((await reserve(t.bus, ["a", "c/**"], "bob")).map((r) => r.pattern)).toEqual(["a", "c/**"]);
    });

    test("shared reservations coexist; an exclusive one conflicts with them either way", async () => {
      await reserve(t.bus, ["docs"], "alice", { shared: true });
      await reserve(t.reopen(), ["docs/**/*.md"], "bob", { shared: true });
      expect(codeOf(await refusal(t.reopen().reservations.reserve(["docs/a.md"], { as: "carol", cwd })))).toEqual({ code: "ECONFLICT", exit: 4 });
      await reserve(t.bus, ["lib"], "carol");
      expect(codeOf(await refusal(t.reopen().reservations.reserve(["lib/x"], { as: "dave", cwd, shared: true })))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await held(t.bus)).toEqual([["docs", "alice", false], ["docs/**/*.md", "bob", false], ["lib", "carol", true]]);
    });

    test("reserving again renews: the same record with a later expiry, its creation kept", async () => {
      const [first] = await reserve(t.bus, ["./src//api/"], "alice", { ttlSec: 10 });
      expect(first.pattern).toBe("src/api");
      const [again] = await reserve(t.reopen(), ["src/api"], "alice", { ttlSec: 600, reason: "longer" });
      expect({ created: again.created_at, reason: again.reason }).toEqual({ created: first.created_at, reason: "longer" });
      expect(again.expires_at).toBeGreaterThanOrEqual(first.created_at + 600);
      expect(await held(t.bus)).toEqual([["src/api", "alice", true]]);
    });

    test("release belongs to the holder: another's is refused with nothing released; --all releases only one's own", async () => {
      await reserve(t.bus, ["a", "b"], "alice");
      await reserve(t.bus, ["c"], "bob");
      const other = t.reopen();
      expect(codeOf(await refusal(other.reservations.release(["c", "a"], { as: "bob", cwd })))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await held(t.bus)).toEqual([["a", "alice", true], ["b", "alice", true], ["c", "bob", true]]);
      expect(await other.reservations.release(["a"], { as: "alice", cwd })).toEqual(["a"]);
      expect(await other.reservations.release(["a"], { as: "alice", cwd })).toEqual([]);
      expect(await t.bus.reservations.release("all", { as: "alice", cwd })).toEqual(["b"]);
      expect(await held(t.bus)).toEqual([["c", "bob", true]]);
    });

    test("a reservation ends at its TTL: not listed, not blocking, dropped (not renewed) at the next change", async () => {
      const [short] = await reserve(t.bus, ["tmp"], "alice", { ttlSec: 0.05 });
      expect((await t.reopen().reservations.blockers(["tmp/x"], { as: "bob", cwd })).map((b) => b.by.holder)).toEqual(["alice"]);
      await past(short.expires_at);
      expect(await held(t.reopen())).toEqual([]);
      expect(await t.reopen().reservations.blockers(["tmp/x"], { as: "bob", cwd })).toEqual([]);
      const [mine] = await reserve(t.reopen(), ["tmp/x"], "bob");
      const [back] = await reserve(t.bus, ["tmp"], "alice", { shared: false }).catch(() => [undefined]);
      expect(back).toBeUndefined(); // bob's tmp/x is in the way now
      const [fresh] = await reserve(t.bus, ["other"], "alice");
      expect(fresh.created_at).toBeGreaterThanOrEqual(mine.created_at);
      expect(await held(t.bus)).toEqual([["other", "alice", true], ["tmp/x", "bob", true]]);
    });

    test("a waiting reserve takes the patterns once a release through another handle frees them", async () => {
      await reserve(t.bus, ["src/db"], "alice");
      const waiting = t.reopen().reservations.reserve(["src/**"], { as: "bob", cwd, wait: true, timeoutMs: BOUND_MS });
      expect(await held(t.bus)).toEqual([["src/db", "alice", true]]);
      expect(await t.reopen().reservations.release(["src/db"], { as: "alice", cwd })).toEqual(["src/db"]);
      const o = await waiting;
      expect({ kind: o.kind, got: o.value!.map((r) => [r.pattern, r.holder]) }).toEqual({ kind: "done", got: [["src/**", "bob"]] });
      expect(await held(t.bus)).toEqual([["src/**", "bob", true]]);
    });

    test("a waiting reserve that is cancelled or times out reserves nothing, naming what was held", async () => {
      await reserve(t.bus, ["busy"], "alice");
      const stop = new AbortController();
      const waiting = t.reopen().reservations.reserve(["free", "busy/x"], { as: "bob", cwd, wait: true, signal: stop.signal });
      stop.abort();
      const o = await waiting;
      expect({ kind: o.kind, value: o.value, pending: o.pending }).toEqual({ kind: "aborted", value: undefined, pending: ["busy/x"] });
      const late = await t.reopen().reservations.reserve(["busy"], { as: "bob", cwd, wait: true, timeoutMs: 0 });
      expect({ kind: late.kind, pending: late.pending }).toEqual({ kind: "timeout", pending: ["busy"] });
      expect(await held(t.bus)).toEqual([["busy", "alice", true]]);
    });

    test("reservers racing for overlapping patterns through separate handles: exactly one wins, round after round", async () => {
      const shapes = (d: string) => [[`${d}/**`], [`${d}/a.ts`], [`${d}/*.ts`], [d], [`**/a.ts`], [`${d}/[ab].ts`, "zzz"]];
      const handles = shapes("x").map(() => t.reopen());
      await Promise.all(handles.map((h) => h.reservations.list({ cwd }))); // connected and ready: the race is the change
      for (let round = 0; round < 5; round++) {
        const d = `r${round}`;
        const tries = await Promise.allSettled(shapes(d).map((p, i) => handles[i].reservations.reserve(p, { as: `agent${i}`, cwd, ttlSec: 600 })));
        const won = tries.flatMap((r) => (r.status === "fulfilled" ? [r.value.value!] : []));
        expect(won.length).toBe(1);
        const winner = won[0][0].holder;
        for (const r of tries.filter((r): r is PromiseRejectedResult => r.status === "rejected")) {
          expect({ ...codeOf(r.reason), holders: [...new Set(r.reason.data.conflicts.map((c: { holder: string }) => c.holder))] }).toEqual({ code: "ECONFLICT", exit: 4, holders: [winner] });
        }
        expect(new Set((await held(t.bus)).map((h) => h[1]))).toEqual(new Set([winner]));
        await t.bus.reservations.release("all", { as: winner, cwd });
      }
    });

    test("blockers: others' live exclusive reservations covering each path; not shared ones, not one's own, not outside the repository", async () => {
      await reserve(t.bus, ["src/api"], "alice", { reason: "api" });
      await reserve(t.bus, ["docs"], "carol", { shared: true });
      await reserve(t.bus, ["lib/*.ts"], "bob");
      const b = await t.reopen().reservations.blockers(["src/api/x.ts", join(cwd, "src/api"), "docs/a.md", "lib/y.ts", "lib/sub/y.ts", "/etc/passwd", "../elsewhere"], { as: "bob", cwd });
      expect(b.map((x) => [x.path, x.by.holder, x.by.pattern, x.by.reason])).toEqual([["src/api/x.ts", "alice", "src/api", "api"], ["src/api", "alice", "src/api", "api"]]);
      expect(await t.bus.reservations.blockers(["src/api/x.ts"], { as: "alice", cwd })).toEqual([]);
      // Outside git the repository is the directory the command runs in: another one's set is another set.
      expect(await t.bus.reservations.blockers(["api/x.ts"], { as: "bob", cwd: join(cwd, "src") })).toEqual([]);
    });

    test("bad input is refused (exit 2) before anything is written", async () => {
      for (const p of [[""], ["../out"], ["a/[b"], ["a\0b"], []]) {
        expect(codeOf(await refusal(t.bus.reservations.reserve(p as string[], { as: "alice", cwd })))).toEqual({ code: "EUSAGE", exit: 2 });
      }
      expect(codeOf(await refusal(t.bus.reservations.reserve(["a"], { as: "alice", cwd, ttlSec: -1 })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(codeOf(await refusal(t.bus.reservations.reserve(["a"], { as: "bad name", cwd })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(await held(t.bus)).toEqual([]);
    });
  });
}
