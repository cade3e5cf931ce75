// a2a mcp declares the logging capability (issue 37, the conformance suite's logging-set-level):
// logging/setLevel answers {}, and what a client is owed and did not get reaches it as a
// notifications/message at level warning, not only as an A2A_LOG line on stderr. Provoked here
// by an inbox whose new/ is a file: neither the unread note nor the mail push can read it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "../harness/mcp";
import { a2a, ON_FILES, tempDir } from "../harness/run";

setDefaultTimeout(60_000);

describe.if(ON_FILES)("logging", () => {
  test("setLevel answers {}; an inbox a2a cannot read reaches the client as a warning", async () => {
    using d = tempDir();
    let got!: (p: LoggingMessageNotification["params"]) => void;
    const warned = new Promise<LoggingMessageNotification["params"]>((r) => (got = r));
    const limit = setTimeout(() => got({ level: "debug", data: "no notifications/message within 20 s" }), 20_000);
    const s = await connect(d.path, { A2A_AGENT: "me" }, { setup: (c) => c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => got(n.params)) });
    try {
      expect(s.client.getServerCapabilities()?.logging).toEqual({});
      expect(await s.client.setLoggingLevel("warning")).toEqual({});
      expect((await a2a(["send", "me", "hi", "--as", "you"], { dir: d.path })).code).toBe(0);
      rmSync(join(d.path, "inbox", "me", "new"), { recursive: true });
      writeFileSync(join(d.path, "inbox", "me", "new"), "not a directory");
      await s.call("whoami");
      const p = await warned;
      expect(p).toMatchObject({ level: "warning", logger: "a2a" });
      expect(String(p.data)).toMatch(/^(unread note|inbox push): .*inbox\/me\/new is not a directory/);
    } finally {
      clearTimeout(limit);
      await s.close();
    }
  });
});
