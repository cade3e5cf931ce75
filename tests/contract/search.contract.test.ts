// The contract of search (docs/PROTOCOL.md §20, "Search"), on every engine, through the Bus only:
// words (AND), prefixes, phrases, hyphenated and non-ASCII words; only what the caller may read;
// --in, --from, --since, --limit; a record written before a search is found by it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { codeOf, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

for (const engine of enginesFor("mail")) {
  describe(`${engine.name}: search`, () => {
    const t = perTest(engine);

    test("words must all match; a prefix and a phrase; each row says kind, id, author, time and a marked snippet", async () => {
      const a = await t.bus.mail.send("alice", "bob", "the schema changed: parser rewritten");
      const b = await t.bus.mail.send("carol", "bob", "the schema is fine");
      await t.bus.mail.send("carol", "bob", "nothing here");
      expect(ids(await t.bus.search.find("bob", "schema"))).toEqual([a.id, b.id].sort());
      expect(ids(await t.bus.search.find("bob", "schema parser"))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", "pars*"))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", '"schema changed"'))).toEqual([a.id]);
      expect(await t.bus.search.find("bob", '"changed schema"')).toEqual([]);
      const [row] = await t.bus.search.find("bob", "rewritten");
      expect(row).toMatchObject({ kind: "message", id: a.id, author: "alice" });
      expect(Math.abs(row.time - Date.now() / 1000)).toBeLessThan(600);
      expect(row.snippet).toBe("the schema changed: parser «rewritten»");
      expect((await t.bus.search.find("bob", "pars*"))[0].snippet).toContain("«parser»");
    });

    test("hyphenated words match as written, in other case, and their parts", async () => {
      const a = await t.bus.mail.send("alice", "bob", "please re-run the E-Mail check");
      const b = await t.bus.mail.send("alice", "bob", "send an e mail");
      await t.bus.mail.send("alice", "bob", "rerun it, mail it");
      expect(ids(await t.bus.search.find("bob", "re-run"))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", "e-mail"))).toEqual([a.id, b.id].sort());
      expect(ids(await t.bus.search.find("bob", '"re-run the e-mail"'))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", "re-ru*"))).toEqual([a.id]);
      expect((await t.bus.search.find("bob", "re-run"))[0].snippet).toBe("please «re»-«run» the E-Mail check");
    });

    test("non-ASCII words are found", async () => {
      const a = await t.bus.mail.send("alice", "bob", "Die Größe der Datei passt nicht");
      const b = await t.bus.topics.publish("notes", "un café crème, s'il vous plaît", "carol");
      expect(ids(await t.bus.search.find("bob", "Größe"))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", "größe datei"))).toEqual([a.id]);
      expect(ids(await t.bus.search.find("bob", "café"))).toEqual([`notes#${b.id}`]);
      expect(ids(await t.bus.search.find("bob", "crè*"))).toEqual([`notes#${b.id}`]);
      expect((await t.bus.search.find("bob", "café"))[0].snippet).toContain("«café»");
    });

    test("mail: only the caller's inbox (not held) and what it sent", async () => {
      const toCarol = await t.bus.mail.send("alice", "carol", "the secret deploy key");
      const toBob = await t.bus.mail.send("alice", "bob", "a public deploy note");
      expect(ids(await t.bus.search.find("bob", "deploy"))).toEqual([toBob.id]);
      expect(ids(await t.bus.search.find("carol", "deploy"))).toEqual([toCarol.id]);
      expect(ids(await t.bus.search.find("alice", "deploy"))).toEqual([toBob.id, toCarol.id].sort()); // what it sent
      expect(await t.bus.search.find("dave", "deploy")).toEqual([]);
      // held: a refused sender's mail is never shown
      await t.bus.mail.deny("bob", ["mallory"]);
      await t.bus.mail.send("mallory", "bob", "a sneaky deploy").catch(() => undefined);
      expect(ids(await t.bus.search.find("bob", "deploy"))).toEqual([toBob.id]);
      expect(await t.bus.search.find("bob", "sneaky")).toEqual([]);
      // read mail is still found
      await t.bus.mail.receive("bob", { max: 10 }, () => {});
      expect(ids(await t.bus.search.find("bob", "deploy"))).toEqual([toBob.id]);
    });

    test("topics, slots and tasks are everyone's; --in narrows the kinds", async () => {
      const m = await t.bus.mail.send("alice", "bob", "flaky widget in mail");
      const p = await t.bus.topics.publish("builds", "flaky widget on the topic", "carol");
      await t.bus.slots.publish("reviewer", "the widget test is flaky");
      const task = await t.bus.tasks.add("q", "fix the flaky widget");
      const rows = await t.bus.search.find("bob", "flaky widget");
      expect(rows.map((r) => `${r.kind}:${r.id}`).sort()).toEqual([`message:${m.id}`, `slot:reviewer`, `task:${task.id}`, `topic:builds#${p.id}`].sort());
      expect(ids(await t.bus.search.find("dave", "flaky widget"))).toEqual([`builds#${p.id}`, "reviewer", task.id].sort());
      expect(ids(await t.bus.search.find("bob", "flaky", { in: "topics,slots" }))).toEqual([`builds#${p.id}`, "reviewer"].sort());
      expect(ids(await t.bus.search.find("bob", "flaky", { in: ["mail"] }))).toEqual([m.id]);
      expect((await t.bus.search.find("bob", "flaky", { in: "slots" }))[0]).toMatchObject({ kind: "slot", id: "reviewer", author: "reviewer" });
      // a task's result is searched too, and the slot's task
      // (its author: who holds it; a done task's record names nobody)
      const c = await t.bus.tasks.claim("q", { as: "worker" });
      expect((await t.bus.search.find("bob", "widget", { in: "tasks" }))[0]).toMatchObject({ kind: "task", id: task.id, author: "worker" });
      await t.bus.tasks.complete(c.value!.id, c.value!.token, "patched the gizmo");
      expect((await t.bus.search.find("bob", "gizmo"))[0]).toMatchObject({ kind: "task", id: task.id, author: null, snippet: "fix the flaky widget patched the «gizmo»" });
      await t.bus.slots.start("builder", "compile the frobnicator");
      expect(ids(await t.bus.search.find("bob", "frobnicator"))).toEqual(["builder"]);
      // a cleared slot is gone from search
      await t.bus.slots.clear("reviewer");
      expect(ids(await t.bus.search.find("bob", "flaky", { in: "slots" }))).toEqual([]);
    });

    test("--from, --since and --limit; ties newest first", async () => {
      const one = await t.bus.topics.publish("log", "same words here", "alice");
      const two = await t.bus.topics.publish("log", "same words here", "bob");
      const three = await t.bus.topics.publish("log", "same words here", "alice");
      const rows = await t.bus.search.find("x", "same words");
      expect(rows.map((r) => r.id)).toEqual([`log#${three.id}`, `log#${two.id}`, `log#${one.id}`]);
      expect(ids(await t.bus.search.find("x", "same", { from: "alice" }))).toEqual([`log#${one.id}`, `log#${three.id}`].sort());
      expect((await t.bus.search.find("x", "same", { limit: 2 })).map((r) => r.id)).toEqual([`log#${three.id}`, `log#${two.id}`]);
      expect(await t.bus.search.find("x", "same", { since: three.sent_at + 3600 })).toEqual([]);
      expect(await t.bus.search.find("x", "same", { since: "2026-01-01" })).toHaveLength(3);
      expect(await t.bus.search.find("x", "same", { since: "1h" })).toHaveLength(3);
    });

    test("a record written after a search is found by the next one (the index is caught up)", async () => {
      expect(await t.bus.search.find("bob", "zebra")).toEqual([]);
      const m = await t.bus.mail.send("alice", "bob", "a zebra crossed");
      expect(ids(await t.bus.search.find("bob", "zebra"))).toEqual([m.id]);
      const p = await t.bus.topics.publish("zoo", "another zebra", "carol");
      expect(ids(await t.bus.search.find("bob", "zebra"))).toEqual([m.id, `zoo#${p.id}`].sort());
      await t.bus.slots.publish("zoo", "first");
      expect(await t.bus.search.find("bob", "zebra", { in: "slots" })).toEqual([]);
      await t.bus.slots.publish("zoo", "zebra now");
      expect(ids(await t.bus.search.find("bob", "zebra", { in: "slots" }))).toEqual(["zoo"]);
      // another process's view finds it too
      expect(ids(await t.reopen().search.find("bob", "zebra", { in: "mail" }))).toEqual([m.id]);
    });

    test("text with newlines, quotes and a NUL is searched as its words, and writing it never fails", async () => {
      const p = await t.bus.topics.publish("notes", 'line one\nline "two" here\\there', "carol");
      await t.bus.slots.publish("odd", "before\u0000after zebra");
      await t.bus.tasks.add("q", "tab\tseparated\u0000payload okapi");
      expect((await t.bus.search.find("bob", "two")).map((r) => [r.id, r.snippet])).toEqual([[`notes#${p.id}`, 'line one line "«two»" here\\there']]);
      expect(ids(await t.bus.search.find("bob", "zebra"))).toEqual(["odd"]);
      expect(ids(await t.bus.search.find("bob", "okapi"))).toHaveLength(1);
      expect(ids(await t.bus.search.find("bob", "separated"))).toHaveLength(1);
    });

    test("bad input: one EUSAGE refusal, nothing found is []", async () => {
      for (const q of ['"open phrase', "", "   ", "---", "a*b", "*", `${"w ".repeat(17)}`]) {
        const e = await refusal(t.bus.search.find("bob", q));
        expect(codeOf(e)).toEqual({ code: "EUSAGE", exit: 2 });
        expect(e.message).toStartWith("bad search query: ");
      }
      expect(codeOf(await refusal(t.bus.search.find("bob", "x", { in: "mail,inboxes" })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(codeOf(await refusal(t.bus.search.find("bob", "x", { since: "yesterday" })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(codeOf(await refusal(t.bus.search.find("bob", "x", { limit: 0 })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(codeOf(await refusal(t.bus.search.find("bob", "x", { from: "../x" })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect(await t.bus.search.find("bob", "nothing")).toEqual([]);
    });
  });
}
