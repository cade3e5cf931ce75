// What a2a mcp declares about its lists, it does (issue 37, finding 3): the tool list never
// changes in a session, so tools carry no listChanged; the resource list (one resource per slot)
// does, and once a client has read resources/list, a slot that appears (from the CLI or the
// session's own agent_publish) or is cleared sends notifications/resources/list_changed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect } from "../harness/mcp";
import { a2a, testStore } from "../harness/run";

setDefaultTimeout(60_000);

describe("list_changed", () => {
  test("tools: not declared; resources: declared, and sent as slots appear and go, after resources/list", async () => {
    using d = testStore();
    let changes = 0;
    let wake: (() => void) | undefined;
    const next = (limitMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const seen = changes;
        const timer = setTimeout(() => reject(new Error(`no resources/list_changed within ${limitMs} ms (${changes} so far)`)), limitMs);
        wake = () => {
          if (changes > seen) clearTimeout(timer), resolve();
        };
      });
    const s = await connect(d.path, {}, {
      setup: (client) =>
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
          changes++;
          wake?.();
        }),
    });
    try {
      const caps = s.client.getServerCapabilities()!;
      expect(caps.tools?.listChanged).toBe(false);
      expect(caps.resources?.listChanged).toBe(true);
      expect((await s.client.listResources()).resources).toEqual([]);
      let got = next();
      expect((await a2a(["publish", "report", "done"], { dir: d.path })).code).toBe(0);
      await got;
      expect((await s.client.listResources()).resources.map((r) => r.name)).toEqual(["report"]);
      // A new version of a slot already listed changes nothing in the list.
      const before = changes;
      got = next();
      await s.json("agent_publish", { name: "summary", result: "x" });
      await got;
      expect((await a2a(["publish", "report", "again"], { dir: d.path })).code).toBe(0);
      got = next();
      expect((await a2a(["clear", "summary"], { dir: d.path })).code).toBe(0);
      await got;
      expect(changes).toBe(before + 2); // summary made, summary cleared: not report's new version
      expect((await s.client.listResources()).resources.map((r) => r.name)).toEqual(["report"]);
    } finally {
      await s.close();
    }
  });
});
