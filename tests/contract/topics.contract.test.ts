// The contract of topics (docs/PROTOCOL.md section 9), on every engine, through the Bus only:
// ids are dense and increasing per topic, a reader reads since an id in order, a named
// subscriber sees each message once across calls and starts where the protocol says.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Bus } from "../../lib/bus";
import { BOUND_MS, codeOf, move, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

type TopicMessage = Awaited<ReturnType<Bus["topics"]["publish"]>>;

// One call of a subscriber without follow: what it was given.
async function drain(bus: Bus, pattern: string, opts: { name?: string; fromStart?: boolean; max?: number } = {}): Promise<string[]> {
  const got: string[] = [];
  const o = await bus.topics.subscribe(pattern, opts, (m) => void got.push(`${m.topic}#${m.id}:${m.body}`));
  expect({ kind: o.kind, value: o.value }).toEqual({ kind: "done", value: got.length });
  return got;
}

// Resolves once the clock has moved past `ms`: a subscriber's start and a message's send
// time are kept to the millisecond, and "published before the subscriber started" must be
// told apart from "in the same millisecond".
async function tick(ms = Date.now()): Promise<void> {
  while (Date.now() <= ms) await Bun.sleep(1);
}

for (const engine of enginesFor("topics")) {
  describe(`${engine.name}: topics`, () => {
    const t = perTest(engine);

    test("ids are dense and increasing from 1, per topic", async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await (i % 2 ? t.reopen() : t.bus).topics.publish("build.status", `m${i}`, "ci")).id);
      expect(ids).toEqual([1, 2, 3, 4, 5]);
      expect((await t.bus.topics.publish("other", "x", "ci")).id).toBe(1);
    });

    test("concurrent publishers never share an id and leave no gap", async () => {
      const pubs = [0, 1, 2].map(() => t.reopen());
      const sent = await Promise.all(Array.from({ length: 30 }, (_, i) => pubs[i % 3].topics.publish("busy", `b${i}`, `p${i % 3}`)));
      expect(sent.map((m) => m.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      const read = await t.bus.topics.read("busy", 0);
      expect(read.map((m) => m.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      for (const m of sent) expect(read[m.id - 1].body).toBe(m.body); // each message under its own id
    });

    test("a reader racing concurrent publishers never skips a number, and sent_at never goes back with the id", async () => {
      const pubs = [0, 1, 2].map(() => t.reopen());
      const reader = t.reopen();
      let finished = false;
      const publishing = Promise.all(Array.from({ length: 60 }, (_, i) => pubs[i % 3].topics.publish("race", `r${i}`, "p"))).finally(() => (finished = true));
      const seen: TopicMessage[] = [];
      for (let last = false; !last; ) {
        last = finished; // one more read after the last publish: it sees everything
        seen.push(...(await reader.topics.read("race", seen.at(-1)?.id ?? 0)));
      }
      await publishing;
      expect(seen.map((m) => m.id)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(seen.every((m, i) => i === 0 || m.sent_at >= seen[i - 1].sent_at)).toBe(true);
    });

    test("read since an id: the messages after it, oldest first, at most limit", async () => {
      for (const b of ["a", "b", "c", "d"]) await t.bus.topics.publish("log", b, "w");
      const r = t.reopen();
      expect((await r.topics.read("log", 0)).map((m) => [m.id, m.body])).toEqual([[1, "a"], [2, "b"], [3, "c"], [4, "d"]]);
      expect((await r.topics.read("log", 2)).map((m) => m.body)).toEqual(["c", "d"]);
      expect((await r.topics.read("log", 1, 2)).map((m) => m.body)).toEqual(["b", "c"]);
      expect(await r.topics.read("log", 4)).toEqual([]);
      expect(await r.topics.read("nothing.here", 0)).toEqual([]);
    });

    test("a message as read: the topic, its id, who the publisher claimed to be, who the store says wrote it, the body exact", async () => {
      const body = "multi\nline {\"from\":\"admin\"} \u0000 ✓";
      const sent = await t.bus.topics.publish("news", body, "reporter");
      const anon = await t.bus.topics.publish("news", "unsigned", "");
      const who = (await t.bus.presence.whoami({ name: "me", source: "given" }, process.cwd())).user;
      const [m, n] = await t.reopen().topics.read("news", 0);
      expect({ topic: m.topic, id: m.id, from: m.from, body: m.body, sent_at: m.sent_at, user: m.user }).toEqual({
        topic: "news", id: 1, from: "reporter", body, sent_at: sent.sent_at, user: who,
      });
      expect({ from: n.from, user: n.user, id: anon.id }).toEqual({ from: "", user: who, id: 2 });
      expect(sent.user).toBe(who);
    });

    test("a topic, or a sender, outside the name rules is refused; nothing is published", async () => {
      expect(codeOf(await refusal(t.bus.topics.publish("build.*", "x", "ci")))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(codeOf(await refusal(t.bus.topics.publish("ok", "x", "ci\n[system]")))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(await t.bus.topics.list()).toEqual([]);
    });

    test("a named subscriber sees each message once across calls, in order, and starts after what came before it", async () => {
      await t.bus.topics.publish("jobs", "before", "lead");
      await tick();
      expect(await drain(t.bus, "jobs", { name: "worker" })).toEqual([]); // created now: "before" is history
      await t.bus.topics.publish("jobs", "j2", "lead");
      await t.bus.topics.publish("jobs", "j3", "lead");
      const second = t.reopen(); // the same subscriber in another process
      expect(await drain(second, "jobs", { name: "worker", max: 1 })).toEqual(["jobs#2:j2"]);
      expect(await drain(second, "jobs", { name: "worker" })).toEqual(["jobs#3:j3"]);
      expect(await drain(t.bus, "jobs", { name: "worker" })).toEqual([]);
      await t.bus.topics.publish("jobs", "j4", "lead");
      expect(await drain(t.bus, "jobs", { name: "worker" })).toEqual(["jobs#4:j4"]);
      // A new named subscriber with fromStart reads the whole log; another without starts after it.
      expect(await drain(second, "jobs", { name: "auditor", fromStart: true })).toEqual(["jobs#1:before", "jobs#2:j2", "jobs#3:j3", "jobs#4:j4"]);
      expect(await drain(second, "jobs", { name: "auditor", fromStart: true })).toEqual([]);
      await tick();
      expect(await drain(second, "jobs", { name: "late" })).toEqual([]);
    });

    test("a topic that appears after a subscriber started is read from its first message", async () => {
      expect(await drain(t.bus, "build.>", { name: "watcher" })).toEqual([]);
      await t.reopen().topics.publish("build.linux", "l1", "ci");
      await t.reopen().topics.publish("build.mac.arm", "m1", "ci");
      await t.reopen().topics.publish("deploy.prod", "d1", "ci");
      expect(await drain(t.bus, "build.>", { name: "watcher" })).toEqual(["build.linux#1:l1", "build.mac.arm#1:m1"]);
    });

    test("patterns: * is one word, > one or more trailing words", async () => {
      for (const topic of ["build", "build.linux", "build.linux.status", "test.linux"]) await t.bus.topics.publish(topic, topic, "ci");
      const topicsOf = async (p: string) => (await drain(t.bus, p, { fromStart: true })).map((s) => s.split("#")[0]);
      expect(await topicsOf("build.*")).toEqual(["build.linux"]);
      expect(await topicsOf("build.>")).toEqual(["build.linux", "build.linux.status"]);
      expect(await topicsOf("*.linux")).toEqual(["build.linux", "test.linux"]);
      expect(await topicsOf("build")).toEqual(["build"]);
    });

    test("follow wakes on each publish through another handle, in order, until stopped", async () => {
      await tick();
      const got: TopicMessage[] = [];
      const stop = new AbortController();
      let wake = () => {};
      const following = t.bus.topics.subscribe("chat.*", { follow: true, name: "listener", timeoutMs: BOUND_MS, signal: stop.signal }, (m) => {
        got.push(m);
        wake();
      });
      const writer = t.reopen();
      for (const [topic, body] of [["chat.a", "hello"], ["chat.b", "hi"], ["chat.a", "bye"]]) {
        const seen = new Promise<void>((resolve) => (wake = resolve));
        await writer.topics.publish(topic, body, "w");
        await seen;
      }
      stop.abort();
      const o = await following;
      expect({ kind: o.kind, value: o.value, pending: o.pending }).toEqual({ kind: "aborted", value: 3, pending: ["chat.*"] });
      expect(got.map((m) => `${m.topic}#${m.id}:${m.body}`)).toEqual(["chat.a#1:hello", "chat.b#1:hi", "chat.a#2:bye"]);
      expect(await drain(t.bus, "chat.*", { name: "listener" })).toEqual([]); // its position was kept
    });

    test("a follower of a topic with a long name is woken by its notifications alone", async () => {
      // The name is over what a notification channel may be called (PostgreSQL: 63 bytes), and
      // the follower's safety recheck is out of reach: past the few looks a follow takes as it
      // starts (its first check, one when each watch is in place), only the publishes' own
      // events wake it, so the later of ten messages, each published once the one before
      // was delivered, arrive by them alone.
      const topic = `long.${"n".repeat(100)}`;
      const follower = t.reopen({ A2A_POLL_MS: String(10 * BOUND_MS) });
      const got: string[] = [];
      const stop = new AbortController();
      let wake = () => {};
      const following = follower.topics.subscribe(topic, { follow: true, timeoutMs: BOUND_MS, signal: stop.signal }, (m) => {
        got.push(m.body);
        wake();
      });
      const writer = t.reopen();
      const bodies = Array.from({ length: 10 }, (_, i) => `m${i}`);
      for (const body of bodies) {
        const seen = new Promise<void>((resolve) => (wake = resolve));
        await writer.topics.publish(topic, body, "w");
        await Promise.race([seen, following]); // a follow that was never woken ends at its timeout
      }
      stop.abort();
      expect((await following).kind).toBe("aborted");
      expect(got).toEqual(bodies);
    });

    test("list: each topic's count and newest id, and each named subscriber's position and unread", async () => {
      for (const b of ["1", "2", "3"]) await t.bus.topics.publish("alerts", b, "mon");
      await drain(t.bus, "alerts", { name: "pager", fromStart: true, max: 2 });
      const [row] = await t.reopen().topics.list();
      expect({ topic: row.topic, messages: row.messages, last_id: row.last_id, subscribers: row.subscribers }).toEqual({
        topic: "alerts", messages: 3, last_id: 3, subscribers: [{ name: "pager", position: 2, unread: 1 }],
      });
    });
  });
}

// Moved to another store of the engine (a2a export and import, lib/move/): TopicStorage.restore,
// subscription and restoreSubscriber.
for (const engine of enginesFor("topics")) {
  describe(`${engine.name}: topics, moved`, () => {
    const t = perTest(engine);

    test("messages keep their numbers and times, subscribers their start and positions; importing again changes nothing", async () => {
      expect(await drain(t.bus, "news", { name: "early" })).toEqual([]); // made before any message: it is to see them all
      await tick();
      for (const b of ["a", "b", "c"]) await t.bus.topics.publish("news", b, "ed");
      expect(await drain(t.bus, "news", { name: "reader", fromStart: true, max: 2 })).toEqual(["news#1:a", "news#2:b"]);
      const target = (await t.open({})).bus;
      const { report } = await move(t.bus, target);
      expect({ messages: report.counts.topic_message, subscribers: report.counts.subscriber }).toEqual({
        messages: { imported: 3, already: 0, kept: 0 }, subscribers: { imported: 2, already: 0, kept: 0 },
      });
      const strip = (ms: TopicMessage[]) => ms.map(({ user: _, ...m }) => m);
      expect(strip(await target.topics.read("news", 0))).toEqual(strip(await t.bus.topics.read("news", 0)));
      expect(await drain(target, "news", { name: "reader" })).toEqual(["news#3:c"]);
      expect(await drain(target, "news", { name: "early" })).toEqual(["news#1:a", "news#2:b", "news#3:c"]);
      expect((await target.topics.publish("news", "d", "ed")).id).toBe(4); // the numbering goes on after the restored ones
      const again = (await move(t.bus, target)).report;
      expect({ messages: again.counts.topic_message, subscribers: again.counts.subscriber }).toEqual({
        messages: { imported: 0, already: 3, kept: 0 }, subscribers: { imported: 0, already: 1, kept: 1 }, // reader moved on there: kept
      });
      expect(await drain(target, "news", { name: "reader" })).toEqual(["news#4:d"]);
    });
  });
}
