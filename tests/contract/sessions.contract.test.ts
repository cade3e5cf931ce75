// The contract of what a session's hooks are told (the Claude Code hooks: SessionStart,
// UserPromptSubmit, Stop), on every engine, through the Bus only: what waits is announced once
// and nothing moves (mail stays unread until received), a stop is blocked while unread mail
// waits but not twice for the same mail, a worker's wait for work wakes on a send.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { BOUND_MS, perTest } from "./support";
import { enginesFor, keeps } from "./engines";

setDefaultTimeout(60_000);

for (const engine of enginesFor("sessions")) {
  describe(`${engine.name}: sessions`, () => {
    const t = perTest(engine);

    // A hook reads the mail that waits (and a session start and a worker's wait the task
    // queues): each test runs where those rooms are kept too.
    const withMail = test.skipIf(!keeps(engine, "mail"));

    test.skipIf(!keeps(engine, "mail", "tasks"))("session start: the unread count, who sent it, and the queues with claimable work", async () => {
      await t.bus.mail.send("alice", "me", "1");
      await t.bus.mail.send("bob", "me", "2");
      await t.bus.mail.send("alice", "me", "3");
      const { id } = await t.bus.tasks.add("builds", "x");
      expect(await t.reopen().sessions.start("me")).toEqual({
        unread: 3, senders: { names: ["alice", "bob"], more: false }, tasks: [{ queue: "builds", id, title: "1 claimable" }],
      });
    });

    withMail("a prompt is told of each unread message once; nothing is marked read", async () => {
      const a = await t.bus.mail.send("alice", "me", "first");
      const first = await t.bus.sessions.prompt("me");
      expect({ count: first.count, shown: first.shown.map((m) => [m.id, m.from, m.body]) }).toEqual({ count: 1, shown: [[a.id, "alice", "first"]] });
      expect(await t.reopen().sessions.prompt("me")).toEqual({ count: 0, shown: [] });
      const b = await t.bus.mail.send("bob", "me", "second");
      const next = await t.reopen().sessions.prompt("me");
      expect({ count: next.count, shown: next.shown.map((m) => m.id) }).toEqual({ count: 1, shown: [b.id] });
      expect(await t.bus.mail.unread("me")).toBe(2);
    });

    withMail("stop: let go when nothing waits; blocked while mail waits; a continuation over the same mail is let go", async () => {
      expect(await t.bus.sessions.stop("me", false)).toEqual({ block: false, unread: 0, letGo: { kind: "nothing-waits" } });
      await t.bus.mail.send("alice", "me", "read me");
      const blocked = await t.bus.sessions.stop("me", false);
      expect(blocked).toEqual({ block: true, unread: 1, senders: { names: ["alice"], more: false }, tasks: [] });
      expect(await t.reopen().sessions.stop("me", true)).toEqual({ block: false, unread: 1, letGo: { kind: "same-mail" } });
      await t.bus.mail.send("bob", "me", "and me");
      expect((await t.bus.sessions.stop("me", true)).block).toBe(true); // new mail: blocked again
    });

    test.skipIf(!keeps(engine, "mail", "tasks"))("a worker's stop counts only the queues it serves, and not twice the same claimable tasks after a continuation", async () => {
      await t.bus.tasks.add("other", "not w's");
      expect(await t.bus.sessions.stop("w", false, 100, true)).toEqual({ block: false, unread: 0, letGo: { kind: "nothing-waits" } });
      await t.bus.sessions.serve("w", "build");
      const { id } = await t.bus.tasks.add("build", "w's");
      const none = { names: [], more: false };
      expect(await t.reopen().sessions.stop("w", false, 100, true)).toEqual({ block: true, unread: 0, senders: none, tasks: [{ queue: "build", id, title: "1 claimable" }] });
      expect(await t.reopen().sessions.stop("w", true, 100, true)).toEqual({ block: false, unread: 0, letGo: { kind: "same-mail" } });
      // Another task claimable first (the oldest one was claimed): work that moved holds it again.
      await t.bus.tasks.add("build", "more");
      await t.bus.tasks.claim("build", { as: "someone" });
      expect((await t.reopen().sessions.stop("w", true, 100, true)).block).toBe(true);
      // Serving is remembered through the other hooks' writes.
      await t.bus.mail.send("alice", "w", "hi");
      await t.bus.sessions.prompt("w");
      expect((await t.reopen().sessions.stop("w", false, 100, true)).block).toBe(true);
      expect(await t.bus.sessions.stop("lead", false, 100, true)).toEqual({ block: false, unread: 0, letGo: { kind: "nothing-waits" } });
    });

    test.skipIf(!keeps(engine, "mail", "tasks"))("a worker's wait for work wakes on a send and takes nothing; a cancelled one ends aborted", async () => {
      const waiting = t.bus.sessions.waitForWork("me", BOUND_MS);
      const sent = await t.reopen().mail.send("alice", "me", "work for you");
      const o = await waiting;
      expect(o.kind).toBe("done");
      expect(o.value && "id" in o.value && o.value.id).toBe(sent.id);
      expect(await t.bus.mail.unread("me")).toBe(1);
      const stop = new AbortController();
      const idle = t.bus.sessions.waitForWork("nobody-yet", BOUND_MS, stop.signal);
      stop.abort();
      expect((await idle).kind).toBe("aborted");
    });
  });
}
