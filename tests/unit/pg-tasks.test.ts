// The task room on PostgreSQL (lib/pg/tasks.ts), where the contract suite cannot look: the
// notifications its trigger sends (a waiter would also find the truth on its recheck, so a
// missing or misnamed notification costs only latency there, and only a listener sees it),
// the channel names computed in SQL as lib/pg/wake.ts computes them in TS (the md5 form of a
// long queue name), who the server says wrote a row, and a row damaged by hand.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { openBus, type Bus } from "../../lib/bus";
import { A2AError } from "../../lib/core/errors";
import type { Channel } from "../../lib/core/channel";
import { pgChannel } from "../../lib/pg/wake";
import type { DamagedChain } from "../../lib/tasks/state";
import { freshDatabase, pgServer, pgSkipReason, type Database } from "../harness/pg";

setDefaultTimeout(60_000);

const skip = pgSkipReason();
if (skip) console.warn(`pg-tasks.test.ts: skipped: ${skip}`);
const BOUND_MS = 30_000;
const LONG = "q".repeat(120); // "a2a.queue:" + 120 bytes: over PostgreSQL's 63, so the md5 form

describe.skipIf(skip !== undefined)("tasks on PostgreSQL", () => {
  let db: Database;
  let bus: Bus;
  let listener: SQL;
  const heard: { channel: string; payload: string }[] = [];
  const waiting: (() => void)[] = [];

  // Resolves once `ch` has had a notification (with `payload`, when given) since `from`.
  const notified = (ch: Channel, payload?: string, from = 0) => {
    const name = pgChannel("a2a", ch);
    const found = () => heard.slice(from).some((h) => h.channel === name && (payload === undefined || h.payload === payload));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no notification on ${name} within ${BOUND_MS} ms`)), BOUND_MS);
      const look = () => {
        if (!found()) return waiting.push(look);
        clearTimeout(timer);
        resolve();
      };
      look();
    });
  };
  const listen = async (...chs: Channel[]) => {
    for (const ch of chs) {
      const name = pgChannel("a2a", ch);
      await listener.listen(name, (payload: string) => {
        heard.push({ channel: name, payload });
        for (const f of waiting.splice(0)) f();
      });
    }
  };

  beforeAll(async () => {
    db = await freshDatabase((await pgServer())!);
    bus = openBus({ dir: db.url, env: {} });
    await bus.tasks.add("first", "makes the schema"); // a write makes the schema (a read makes none)
    listener = new SQL({ url: db.url, max: 1 });
  });
  afterAll(async () => {
    await listener?.close();
    await bus?.close();
    await db?.drop();
  });

  test("the SQL channel names are lib/pg/wake.ts's, long names in their md5 form", async () => {
    const rows = await listener`select a2a.channel(${`queue:${LONG}`}) as long, a2a.channel('queue:build') as short`;
    expect(rows[0]).toEqual({ long: pgChannel("a2a", { on: "queue", queue: LONG }), short: pgChannel("a2a", { on: "queue", queue: "build" }) });
    expect(rows[0].long).toMatch(/^#[0-9a-f]{32}$/);
  });

  test("an add wakes its queue with the task's id; a change wakes the task", async () => {
    await listen({ on: "queue", queue: LONG });
    const from = heard.length;
    const pending = bus.tasks.add(LONG, "work");
    const { id } = await pending;
    await notified({ on: "queue", queue: LONG }, id, from);
    await listen({ on: "task", queue: LONG, id });
    const at = heard.length;
    const c = (await bus.tasks.claim(LONG)).value!;
    await notified({ on: "task", queue: LONG, id }, undefined, at);
    const writer = await listener`select writer = current_user as ours, changed_at is not null as stamped from a2a.tasks where id = ${id}`;
    expect(writer[0]).toEqual({ ours: true, stamped: true });
    await bus.tasks.complete(id, c.token, "ok");
  });

  test("a dependency done wakes its dependants' queues and channels; one dead wakes the channels down the whole graph", async () => {
    const a = await bus.tasks.add("up", "A");
    const b = await bus.tasks.add(LONG, "B", { after: [a.id] });
    const c = await bus.tasks.add("mid", "C", { after: [b.id] });
    const d = await bus.tasks.add("low", "D", { after: [c.id] });
    await listen({ on: "queue", queue: "mid" }, { on: "task", queue: LONG, id: b.id }, { on: "task", queue: "mid", id: c.id }, { on: "task", queue: "low", id: d.id });
    const from = heard.length;
    const ca = (await bus.tasks.claim("up")).value!;
    await bus.tasks.complete(a.id, ca.token, "A done");
    await notified({ on: "queue", queue: LONG }, b.id, from);
    await notified({ on: "task", queue: LONG, id: b.id }, undefined, from);
    const dying = heard.length;
    const cb = (await bus.tasks.claim(LONG)).value!;
    await bus.tasks.fail(b.id, cb.token, { reason: "broken", retry: false });
    await notified({ on: "task", queue: "mid", id: c.id }, undefined, dying);
    await notified({ on: "task", queue: "low", id: d.id }, undefined, dying); // two steps down
    expect(heard.slice(dying).some((h) => h.channel === pgChannel("a2a", { on: "queue", queue: "mid" }))).toBe(false); // dead: nothing to claim
    expect((await bus.tasks.show(d.id)).state).toBe("dead");
  });

  test("a row damaged by hand: show names it, list and claim pass over it, cancel writes the task dead above it", async () => {
    const good = await bus.tasks.add("hurt", "fine");
    const bad = await bus.tasks.add("hurt", "to be damaged");
    await listener`update a2a.tasks set record = 'garbage' where id = ${bad.id}`;
    const e = await bus.tasks.show(bad.id).catch((x) => x);
    expect(e).toBeInstanceOf(A2AError);
    expect({ code: e.code, damaged: e.data.damaged, why: e.data.why }).toEqual({ code: "EIO", damaged: true, why: "not JSON" });
    expect(e.message).toContain(`task ${bad.id} of queue hurt`);
    const damaged: DamagedChain[] = [];
    expect((await bus.tasks.list({ queue: "hurt", damaged })).map((v) => v.id)).toEqual([good.id]);
    expect(damaged).toMatchObject([{ kind: "task", name: bad.id, why: "not JSON" }]);
    expect((await bus.tasks.claim("hurt")).value!.id).toBe(good.id);
    const v = await bus.tasks.cancel(bad.id);
    expect({ state: v.state, version: v.version, payload: v.payload }).toEqual({ state: "dead", version: 2, payload: "" });
    expect(v.reason).toStartWith("cancelled (its version ");
    expect((await bus.tasks.show(bad.id)).state).toBe("dead");
  });
  test("a claimer passes over a task another writer holds and claims the next at once; with nothing else left, it waits its turn", async () => {
    const q = "spread";
    const first = (await bus.tasks.add(q, "first")).id;
    const second = (await bus.tasks.add(q, "second")).id;
    const holder = new SQL({ url: db.url, max: 1 });
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let locked = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const holding = holder.begin(async (tx) => {
      await tx`select 1 from a2a.tasks where queue = ${q} and id = ${first} for update`;
      locked();
      await held;
    });
    await isLocked;
    const bound = async <T>(p: Promise<T>, what: string): Promise<T> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, no) => (timer = setTimeout(() => no(new Error(`${what}: still waiting after 30 s`)), 30_000)));
      try {
        return await Promise.race([p, late]);
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      const c = await bound(bus.tasks.claim(q, { as: "w1" }), "the claim while the first task's turn is held");
      expect(c.value!.id).toBe(second);
      const waiting = bus.tasks.claim(q, { as: "w2" }); // only the held one is left
      release();
      await holding;
      expect((await bound(waiting, "the claim of the task held before")).value!.id).toBe(first);
    } finally {
      release();
      await holding.catch(() => {});
      await holder.close();
    }
  });
  test("a claim reads its candidates a page at a time and finds a claimable task beyond many that are not", async () => {
    const q = "paged";
    const gate = (await bus.tasks.add(q, "gate")).id;
    const held = (await bus.tasks.claim(q, { as: "w0" })).value!;
    expect(held.id).toBe(gate);
    const blocked = await bus.tasks.addMany(Array.from({ length: 70 }, (_, i) => ({ queue: q, payload: `blocked ${i}`, after: [gate] })));
    const free = (await bus.tasks.add(q, "free")).id;
    expect(free > blocked.at(-1)!.id).toBe(true); // oldest first: it comes after every blocked one
    expect((await bus.tasks.claim(q, { as: "w1" })).value!.id).toBe(free);
    await bus.tasks.complete(held.id, held.token, "open");
    expect((await bus.tasks.claim(q, { as: "w1" })).value!.id).toBe(blocked[0].id);
  });
});
