// lib/mail/watch-inbox.ts in-process: "new unread mail" events for one agent, through the one
// watch primitive. Each wait is on the event itself, with a generous bound.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { allowSenders, setPolicyMode } from "../../lib/mail/policy";
import type { ReceivedMessage } from "../../lib/mail/message";
import { sendMessage } from "../../lib/mail/send";
import { mailStorage } from "../../lib/mail/storage";
import { watchInbox } from "../../lib/mail/watch-inbox";
import { tempDir } from "../harness/run";

setDefaultTimeout(60_000);

// Collects announcements; next() resolves with the next one (or rejects after limitMs).
function recorder() {
  const seen: ReceivedMessage[] = [];
  const waiting: ((m: ReceivedMessage) => void)[] = [];
  return {
    seen,
    listener: (m: ReceivedMessage) => {
      seen.push(m);
      waiting.shift()?.(m);
    },
    next: (limitMs = 20_000) =>
      new Promise<ReceivedMessage>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("no announcement")), limitMs);
        waiting.push((m) => (clearTimeout(t), resolve(m)));
      }),
  };
}

describe("watchInbox", () => {
  test("announces mail already there, then new mail, once each; a message back from a claim is announced again", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: {} });
    try {
      const first = await sendMessage(store, "ops", "box", "before");
      const r = recorder();
      const stop = await watchInbox(store, "box", r.listener);
      expect(r.seen.map((m) => m.id)).toEqual([first.id]); // the initial scan
      const arriving = r.next();
      const second = await sendMessage(store, "ops", "box", "after");
      expect((await arriving).id).toBe(second.id);

      const mail = mailStorage(store);
      const claim = (await mail.claim("box", first.id))!;
      expect(claim).toBeDefined();
      const again = r.next();
      expect(await mail.move("box", first.id, claim, "unread")).toBe(true); // unread again at once: both events may arrive after both moves
      expect((await again).body).toBe("before");
      expect(r.seen.map((m) => m.body)).toEqual(["before", "after", "before"]);
      stop();
      await sendMessage(store, "ops", "box", "after stop");
      expect(r.seen).toHaveLength(3);
    } finally {
      closeWatches(store);
    }
  });

  test("never announces a sender the policy refuses", async () => {
    using d = tempDir();
    const store = openStore({ dir: d.path, env: {} });
    try {
      await sendMessage(store, "ops", "box", "early"); // in new/ before the policy closed
      await setPolicyMode(store, "box", "allowlist");
      await allowSenders(store, "box", ["boss"]);
      const r = recorder();
      const stop = await watchInbox(store, "box", r.listener);
      expect(r.seen).toEqual([]);
      const next = r.next();
      await sendMessage(store, "boss", "box", "allowed");
      expect((await next).body).toBe("allowed");
      expect(r.seen.map((m) => m.from)).toEqual(["boss"]); // ops's message is never pushed
      stop();
    } finally {
      closeWatches(store);
    }
  });
});
