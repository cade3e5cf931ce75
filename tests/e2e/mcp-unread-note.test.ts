// The unread note on a2a mcp's results (cli/mcp/session.ts): counted from the call's start and
// counted again when the inbox changed meanwhile, so it is never low, on either engine
// (A2A_TEST_STORE): mail sent before a call, or during a wait, is announced on its answer; mail
// read (here, or by `a2a recv` in another process) is out of the next result's note.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { a2a, testStore } from "../harness/run";
import { connect } from "../harness/mcp";

setDefaultTimeout(90_000);

const noteOf = (r: CallToolResult) => {
  expect(r.isError).toBeFalsy();
  const unread = (r.structuredContent as { unread?: string }).unread;
  expect(r.content.length).toBe(unread ? 2 : 1);
  return unread ?? "";
};
const ok = async (p: ReturnType<typeof a2a>) => expect((await p).code).toBe(0);

describe("the unread note of a2a mcp", () => {
  test("mail sent while agent_wait blocks is announced on the wait's answer", async () => {
    using d = testStore();
    const A = await connect(d.path, { A2A_AGENT: "alice" });
    try {
      expect(noteOf(await A.call("whoami"))).toBe("");
      for (const [i, job] of ["job1", "job2"].entries()) {
        const waiting = A.call("agent_wait", { name: job, timeout: 60 });
        await ok(a2a(["wait-state", "alice", "waiting", "--timeout", "60"], { dir: d.path })); // the call is under way
        await ok(a2a(["send", "alice", `during ${job}`, "--as", "bob"], { dir: d.path }));
        await ok(a2a(["publish", job, "done"], { dir: d.path }));
        const r = await waiting;
        expect((r.structuredContent as { result?: string }).result).toBe("done");
        expect(noteOf(r)).toBe(`${i + 1} unread message${i ? "s" : ""}: call check_messages`);
        await ok(a2a(["wait-state", "alice", "idle", "--timeout", "60"], { dir: d.path })); // its end marked
      }
    } finally {
      await A.close();
    }
  });

  test("mail read by check_messages or by a2a recv elsewhere is out of the next note", async () => {
    using d = testStore();
    const A = await connect(d.path, { A2A_AGENT: "alice" });
    try {
      for (const body of ["one", "two", "three"]) await ok(a2a(["send", "alice", body, "--as", "bob"], { dir: d.path }));
      expect(noteOf(await A.call("agent_status"))).toBe("3 unread messages: call check_messages");
      // check_messages's own answer counts what it leaves, not what it hands over.
      expect(noteOf(await A.call("check_messages", { limit: 1 }))).toBe("2 unread messages: call check_messages");
      expect(noteOf(await A.call("agent_status"))).toBe("2 unread messages: call check_messages");
      await ok(a2a(["recv", "--as", "alice"], { dir: d.path }));
      expect(noteOf(await A.call("agent_status"))).toBe("1 unread message: call check_messages");
      // Read by another reader during a wait: the wait's answer may still count it (on
      // PostgreSQL, until the engine's tick), the next result does not.
      const waiting = A.call("agent_wait", { name: "job", timeout: 60 });
      await ok(a2a(["wait-state", "alice", "waiting", "--timeout", "60"], { dir: d.path }));
      await ok(a2a(["recv", "--as", "alice"], { dir: d.path }));
      await ok(a2a(["publish", "job", "done"], { dir: d.path }));
      expect(["", "1 unread message: call check_messages"]).toContain(noteOf(await waiting));
      expect(noteOf(await A.call("agent_status"))).toBe("");
      expect(noteOf(await A.call("check_messages"))).toBe("");
    } finally {
      await A.close();
    }
  });
});
