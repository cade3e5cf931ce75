// Reading direct messages: receive (recv, check_messages) and request (send --wait-reply).
//
// How a message is read (the storage's steps are lib/mail/storage.ts's):
//   1. recover claims of dead readers (storage recover);
//   2. claim the oldest unread messages, up to `max` (storage claim: a message another reader
//      claimed first is skipped); with `match`, a message is read unread first and only
//      claimed if it matches;
//   3. a claimed message that is not valid is set aside (and named to the reader: onDamaged);
//      one from a sender the policy refuses is held (lib/mail/policy.ts);
//   4. hand the rest to `show`, which writes them out;
//   5. when `show` has returned, move them to read: at that instant they are read. If `show`
//      throws (stdout closed) they return to unread; if the reader dies, step 1 of the next
//      reader returns them.
// With `peek` nothing moves. With `wait`, steps 2-5 run on every change of the inbox
// (lib/core/watch.ts waitUntil) until something was taken, and step 1 repeats every RECOVER_MS
// (or at each of the engine's own ticks, where it has them), so mail whose reader died is picked
// up by a waiting reader too.

import { type Store } from "../core/config";
import { done, ended, type Outcome } from "../core/outcome";
import { checkAgent } from "../core/names";
import { waitUntil, type WaitOptions } from "../core/watch";
import type { Message, ReceivedMessage } from "./message";
import { humanMark } from "./human";
import { accepts, readGate } from "./policy";
import { sendMessage, type SendOptions, type SendResult } from "./send";
import { mailStorage, type At } from "./storage";
import { threadOf } from "./thread";

// How often a waiting reader looks for claims of dead readers (and at the whole inbox again).
export const RECOVER_MS = 2_000;

export interface ReceiveOptions extends WaitOptions {
  wait?: boolean; // block until at least one message is there
  peek?: boolean; // show without marking read
  max?: number; // at most this many (default 1)
  match?: (m: Message) => boolean; // only messages passing this (others stay unread)
  onDamaged?: (where: string) => void; // told where each message that was not valid was set aside
}

type Taken = { msg: ReceivedMessage; at: At };

// Shows unread messages of `agent` through `show` (oldest first) and marks them read after it
// returns (or its promise resolves: the MCP server resolves once its answer is on the wire).
// Returns what was shown: done with [] when nothing was there and `wait` was not asked;
// timeout or aborted (pending: the inbox) when a wait ended with nothing.
export async function receive(
  store: Store,
  agent: string,
  opts: ReceiveOptions,
  show: (msgs: ReceivedMessage[]) => void | Promise<void>,
): Promise<Outcome<ReceivedMessage[]>> {
  checkAgent(agent);
  const mail = mailStorage(store);
  await mail.open(agent, true);
  const max = opts.max ?? 1;
  // `only`: the id of a message that just arrived (else look at the whole inbox).
  const take = async (only: string | undefined): Promise<Taken[] | undefined> => {
    const policy = await readGate(store, agent);
    const got: Taken[] = [];
    for (const id of only ? [only] : await mail.ids(agent, "unread")) {
      if (got.length >= max) break;
      if (opts.peek || opts.match) {
        const m = await mail.read(agent, id, "unread");
        if (typeof m !== "object" || !accepts(policy, m.from, m.user)) continue; // held at the next real read
        if (opts.match && !opts.match(m)) continue;
        if (opts.peek) {
          got.push({ msg: { ...m, state: "unread", thread: await threadOf(mail, m), ...humanMark(m, policy.owner) }, at: "unread" });
          continue;
        }
      }
      const claim = await mail.claim(agent, id);
      if (!claim) continue;
      const m = await mail.read(agent, id, claim);
      if (m === "absent") continue;
      if (m === "corrupt") {
        // Set aside so it is not read again, and named to the reader: a sender's mail it never
        // gets must not vanish without a word.
        const where = await mail.setAside(agent, id, claim);
        if (where) opts.onDamaged?.(where);
      } else if (!accepts(policy, m.from, m.user)) await mail.move(agent, id, claim, "held");
      else got.push({ msg: { ...m, state: "read", thread: await threadOf(mail, m), ...humanMark(m, policy.owner) }, at: claim });
    }
    return got.length ? got : undefined;
  };
  if (!opts.peek) await mail.recover(agent);
  let taken = await take(undefined);
  if (!taken && opts.wait) {
    let lastRecovery = Date.now();
    // Every RECOVER_MS the whole inbox is looked at again, claims of dead readers first. An
    // engine that ticks by itself (PostgreSQL: every 2 s, or A2A_POLL_MS) already tells the wait
    // to look at everything that often: the recovery rides on its ticks (not on the other
    // looks at everything, such as a LISTEN put in place), and a second timer would only double
    // what every idle session costs the server.
    const tickMs = store.engine.tickMs;
    const due = tickMs ? tickMs / 2 : RECOVER_MS;
    const takeOrRecover = async (id: string | undefined) => {
      if (id === undefined && !opts.peek && Date.now() - lastRecovery >= due) {
        lastRecovery = Date.now();
        try {
          await mail.recover(agent);
        } catch {
          // a transient storage error: the next tick retries
        }
      }
      return take(id);
    };
    // The take above was the wait's first check: the wait starts by watching.
    const outcome = await waitUntil(store, { on: "inbox", agent }, takeOrRecover, { ...opts, recheckMs: tickMs ? undefined : RECOVER_MS, checked: true });
    if (outcome.kind !== "done") return ended(outcome.kind, [], [agent]);
    taken = outcome.value;
  }
  if (!taken) return done([]);
  const msgs = taken.map((t) => t.msg);
  if (opts.peek) {
    await show(msgs);
    return done(msgs);
  }
  try {
    await show(msgs);
  } catch (err) {
    for (const t of taken) await mail.move(agent, t.msg.id, t.at, "unread");
    throw err;
  }
  for (const t of taken) await mail.move(agent, t.msg.id, t.at, "read");
  return done(msgs);
}

// Sends `body` and waits for the message answering it (reply_to = its id) in `from`'s inbox.
export async function request(
  store: Store, from: string, to: string, body: string, opts: SendOptions & WaitOptions,
  show: (sent: SendResult, reply: ReceivedMessage) => void,
): Promise<Outcome<{ sent: SendResult; reply?: ReceivedMessage }>> {
  const sent = await sendMessage(store, from, to, body, opts);
  let reply: ReceivedMessage | undefined;
  const outcome = await receive(store, from, { ...opts, wait: true, max: 1, match: (m) => m.reply_to === sent.id }, (ms) => {
    reply = ms[0];
    show(sent, ms[0]);
  });
  return { ...outcome, value: { sent, reply }, pending: outcome.kind === "done" ? [] : [`a reply to ${sent.id}`] };
}

