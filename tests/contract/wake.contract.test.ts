// The contract of waking an idle session (docs/PROTOCOL.md §11, "Waking an idle session"), on
// every engine, through the Bus only: new mail for an idle session is one wake; mail arriving
// while it is pending joins its batch; the bookkeeping lives in the session record and survives
// the hooks' own writes; a user's prompt (not a wake's) starts the loop guard over; nothing is
// read or moved by a decision.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "../../lib/bus";
import { tempDir } from "../harness/run";
import { past, perTest } from "./support";
import { enginesFor, keeps } from "./engines";

setDefaultTimeout(60_000);

type Presence = Awaited<ReturnType<Bus["presence"]["start"]>>;
const LIMITS = { run: 5, gapSec: 2, perSender: 10, windowSec: 600, pendingSec: 60 }; // lib/sessions/wake-rule.ts WAKE_LIMITS

for (const engine of enginesFor("sessions")) {
  describe(`${engine.name}: waking an idle session`, () => {
    const t = perTest(engine);
    const it = test.skipIf(!keeps(engine, "presence", "mail"));

    it("one wake per batch, kept in the session record across the hooks' writes; the user's prompt resets the loop guard", async () => {
      const work = tempDir("a2a-contract-wake-").path;
      let p: Presence | undefined;
      try {
        const cwd = join(work, "proj");
        mkdirSync(cwd, { recursive: true });
        p = await t.reopen({ A2A_AGENT: "alice" }).presence.start({ cwd });
        await past(p.record().started_at);
        expect(await t.bus.sessions.wakeCheck("alice")).toEqual({ wake: false, why: "nothing-new" });

        const m1 = await t.bus.mail.send("bob", "alice", "first");
        const d = await t.reopen().sessions.wakeCheck("alice");
        expect(d).toMatchObject({ wake: true, ids: [m1.id], senders: ["bob"], count: 1, mark: { ids: [m1.id], run: 1 } });
        if (!d.wake) throw new Error("expected a wake");
        await t.bus.sessions.keepWake("alice", d.mark);
        expect(await t.bus.mail.unread("alice")).toBe(1); // a decision moves nothing

        const m2 = await t.bus.mail.send("carol", "alice", "second");
        const joined = await t.reopen().sessions.wakeCheck("alice");
        expect(joined).toMatchObject({ wake: false, why: "batch-open", mark: { ids: [m1.id, m2.id], run: 1 } });
        await t.bus.sessions.keepWake("alice", joined.mark!);

        // The hooks write the record too (a prompt announces the mail): the wake stays.
        await t.bus.sessions.prompt("alice");
        await t.bus.sessions.mark("alice", "working");
        await t.bus.sessions.prompted("alice", "[a2a wake] 2 new messages in your a2a inbox from bob, carol (other agents)."); // the wake's own prompt: no reset
        const kept = await t.reopen().sessions.wakeCheck("alice", { ...LIMITS, pendingSec: 0 });
        expect(kept).toEqual({ wake: false, why: "not-idle" });
        await t.bus.sessions.prompted("alice", "fix the build"); // the user's: the loop guard starts over
        await t.bus.sessions.mark("alice", "idle");
        expect(await t.reopen().sessions.wakeCheck("alice")).toEqual({ wake: false, why: "nothing-new" });

        const m3 = await t.bus.mail.send("bob", "alice", "third");
        const again = await t.reopen().sessions.wakeCheck("alice", { ...LIMITS, gapSec: 0 });
        expect(again).toMatchObject({ wake: true, ids: [m3.id], mark: { run: 1, ids: [m1.id, m2.id, m3.id] } });
      } finally {
        await p?.close();
        rmSync(work, { recursive: true, force: true });
      }
    });

    it("mail that comes in a turn the user started, after a woken turn ended, wakes the session once it is idle: it joins no old batch", async () => {
      const work = tempDir("a2a-contract-wake-").path;
      let p: Presence | undefined;
      try {
        const cwd = join(work, "proj");
        mkdirSync(cwd, { recursive: true });
        p = await t.reopen({ A2A_AGENT: "alice" }).presence.start({ cwd });
        await past(p.record().started_at);
        await t.bus.mail.send("bob", "alice", "first");
        const d = await t.reopen().sessions.wakeCheck("alice");
        if (!d.wake) throw new Error("expected a wake");
        await t.bus.sessions.keepWake("alice", d.mark);
        // The woken turn runs, reads its mail and ends.
        await past(d.mark.at);
        await t.bus.sessions.prompted("alice", "[a2a wake] 1 new message in your a2a inbox from bob (other agents).");
        await t.bus.sessions.mark("alice", "working");
        await t.bus.mail.receive("alice", { max: 10 }, () => {});
        await t.bus.sessions.mark("alice", "idle");
        // Later the user prompts: a turn of theirs, in which mail comes.
        await t.bus.sessions.prompted("alice", "fix the build");
        await t.bus.sessions.mark("alice", "working");
        const m2 = await t.bus.mail.send("carol", "alice", "second");
        expect(await t.reopen().sessions.wakeCheck("alice", { ...LIMITS, gapSec: 0 })).toEqual({ wake: false, why: "not-idle" });
        await t.bus.sessions.mark("alice", "idle"); // its stop, the mail not read (a stop let go)
        const after = await t.reopen().sessions.wakeCheck("alice", { ...LIMITS, gapSec: 0 });
        expect(after).toMatchObject({ wake: true, ids: [m2.id], senders: ["carol"] });
      } finally {
        await p?.close();
        rmSync(work, { recursive: true, force: true });
      }
    });

    it("the loop guard holds agents' mail, and the person's own message (the dashboard's @human) starts it over, as a prompt does", async () => {
      const work = tempDir("a2a-contract-wake-").path;
      let p: Presence | undefined;
      try {
        const cwd = join(work, "proj");
        mkdirSync(cwd, { recursive: true });
        p = await t.reopen({ A2A_AGENT: "alice" }).presence.start({ cwd });
        await t.bus.mail.ensureInbox("alice", true);
        await past(p.record().started_at);
        // Five wakes in a row with no prompt: the guard holds the next one.
        await t.bus.sessions.keepWake("alice", { at: 1, ids: [], run: LIMITS.run, held: true, senders: {} });
        await t.bus.mail.send("bob", "alice", "ping");
        expect(await t.reopen().sessions.wakeCheck("alice")).toEqual({ wake: false, why: "loop-guard" });
        const typed = await t.reopen().mail.sendAsHuman("alice", "stop and review the plan");
        const d = await t.reopen().sessions.wakeCheck("alice");
        expect(d).toMatchObject({ wake: true, senders: expect.arrayContaining(["@human"]), mark: { run: 1, held: false } });
        expect(d.wake && d.ids).toContain(typed.id);
      } finally {
        await p?.close();
        rmSync(work, { recursive: true, force: true });
      }
    });
  });
}
