// a2a import (lib/move/) never replaces a record it did not bring (docs/PROTOCOL.md §18, step 4):
// versions of two stores say nothing about each other, so a record of the target's own under a
// name the export also uses is kept, counted and named, whatever its version; replaceOlder lets
// the export's replace an older one, never a newer.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Bus } from "../../lib/bus";
import { move } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

async function take(bus: Bus, names: string[], as: string) {
  const o = await bus.leases.takeUndoably(names, { as, ttlSec: 600 });
  expect(o.kind).toBe("done");
}

// The export's text of `from` imported into `to` with `opts`.
async function importText(to: Bus, text: string, opts = {}) {
  return to.move.importStore({ open: async function* () { yield Buffer.from(text, "utf8"); }, again: true }, opts);
}

for (const engine of enginesFor("slots")) {
  describe(`${engine.name}: an import keeps the store's own records`, () => {
    test("a slot, a lease, a policy and a topic number of the target's own are kept and named, a higher version in the export notwithstanding; the rest comes in; twice says the same", async () => {
      const src = await engine.open();
      const source = src.bus;
      const target = await engine.open();
      try {
        // The source: schema at version 2, a lease taken twice (version 2), a policy, two topic messages.
        await source.slots.publish("schema", "create table a (x int);");
        await source.slots.publish("schema", "create table a (x int, y int);");
        await source.slots.publish("fresh", "only in the export");
        await take(source, ["db"], "alice");
        await source.leases.release(["db"], { as: "alice" });
        await take(source, ["db"], "alice");
        await source.mail.setMode("carol", "allowlist");
        await source.topics.publish("news", "source one", "ci");
        await source.topics.publish("news", "source two", "ci");
        // The target's own, unrelated records under the same names, each at a lower version.
        const t = target.bus;
        await t.slots.publish("schema", "the target's own schema");
        await take(t, ["db"], "bob");
        await t.mail.setMode("carol", "open");
        await t.mail.allow("carol", ["dave"]);
        await t.topics.publish("news", "target one", "ops");
        const text = await (async () => {
          const lines: string[] = [];
          await source.move.exportStore((l) => void lines.push(l));
          return lines.join("");
        })();

        for (const round of [1, 2]) {
          const r = await importText(t, text);
          expect(r.counts.slot).toEqual({ imported: round === 1 ? 1 : 0, already: round === 1 ? 0 : 1, kept: 1 });
          expect(r.counts.lease.kept).toBe(1);
          expect(r.counts.policy.kept).toBe(1);
          expect(r.counts.topic_message).toEqual({ imported: round === 1 ? 1 : 0, already: round === 1 ? 0 : 1, kept: 1 });
          expect(r.kept).toEqual(
            expect.arrayContaining([
              { kind: "slot", name: "schema" },
              { kind: "lease", name: "db" },
              { kind: "policy", name: "carol" },
              { kind: "topic_message", name: "news#1" },
            ]),
          );
          expect(await t.slots.get("schema")).toMatchObject({ version: 1, result: "the target's own schema" });
          expect((await t.leases.list(["db"]))[0]).toMatchObject({ holder: "bob" });
          expect(await t.mail.policy("carol")).toMatchObject({ mode: "open", allow: ["dave"] });
          expect((await t.topics.read("news")).map((m) => m.body)).toEqual(["target one", "source two"]);
          expect(await t.slots.get("fresh")).toMatchObject({ result: "only in the export" });
        }

        // replaceOlder: the export's replaces an older version, never a newer one.
        const r = await importText(t, text, { replaceOlder: true });
        expect(r.counts.slot).toEqual({ imported: 1, already: 1, kept: 0 });
        expect(await t.slots.get("schema")).toMatchObject({ version: 2, result: "create table a (x int, y int);" });
        expect(r.counts.topic_message.kept).toBe(1); // a number holding another message is never taken
      } finally {
        await target.dispose();
        await src.dispose();
      }
    });
  });
}
