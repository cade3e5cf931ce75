// Reading direct messages: receive (recv, check_messages) and request (send --wait-reply).
//
// How a message is read:
//   1. recover claims of dead readers (lib/mail/claim.ts recoverClaims);
//   2. claim the oldest unread messages, up to `max` (rename new/ -> claim/; a message another
//      reader claimed first is skipped); with `match`, a message is read in new/ first and
//      only claimed if it matches;
//   3. a claimed file that is not a valid message goes to bad/ (and is named to the reader:
//      onDamaged); one from a sender the policy refuses goes to held/ (lib/mail/policy.ts);
//   4. hand the rest to `show`, which writes them out;
//   5. when `show` has returned, move them to cur/: at that instant they are read. If `show`
//      throws (stdout closed) they go back to new/; if the reader dies, step 1 of the next
//      reader returns them.
// With `peek` nothing moves. With `wait`, steps 2-5 run on every change in new/ (lib/core/watch.ts
// waitUntil) until something was taken, and step 1 repeats every RECOVER_MS, so mail whose
// reader died is picked up by a waiting reader too.

import { type Store } from "../core/config";
import { ensureDir } from "../core/guard";
import { done, ended, type Outcome } from "../core/outcome";
import { badDir, checkAgent, msgFile, newDir } from "../core/paths";
import { waitUntil, type WaitOptions } from "../core/watch";
import { claim, recoverClaims, release, RECOVER_MS, settle } from "./claim";
import { ensureInbox, idsIn, moveMessage, readMessageFile, type Message, type ReceivedMessage } from "./message";
import { accepts, readPolicy } from "./policy";
import { sendMessage, type SendOptions, type SendResult } from "./send";

export interface ReceiveOptions extends WaitOptions {
  wait?: boolean; // block until at least one message is there
  peek?: boolean; // show without marking read
  max?: number; // at most this many (default 1)
  match?: (m: Message) => boolean; // only messages passing this (others stay unread)
  onDamaged?: (file: string) => void; // told where each file that was not a message was set aside (bad/)
}

type Taken = { msg: ReceivedMessage; path: string };

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
  ensureInbox(store, agent, true);
  const max = opts.max ?? 1;
  // `only`: the id of a message that just arrived (else look at the whole inbox).
  const take = (only: string | undefined): Taken[] | undefined => {
    const policy = readPolicy(store, agent);
    const got: Taken[] = [];
    for (const id of only ? [only] : idsIn(store, newDir(store, agent))) {
      if (got.length >= max) break;
      const newPath = msgFile(newDir(store, agent), id);
      if (opts.peek || opts.match) {
        const m = readMessageFile(store, newPath, id, "unread");
        if (typeof m !== "object" || !accepts(policy, m.from, m.user)) continue; // held at the next real read
        if (opts.match && !opts.match(m)) continue;
        if (opts.peek) {
          got.push({ msg: m, path: newPath });
          continue;
        }
      }
      const path = claim(store, agent, id);
      if (!path) continue;
      const m = readMessageFile(store, path, id, "read");
      if (m === "absent") continue;
      if (m === "corrupt") quarantine(store, agent, path, id, opts.onDamaged);
      else if (!accepts(policy, m.from, m.user)) settle(store, agent, path, id, "held");
      else got.push({ msg: m, path });
    }
    return got.length ? got : undefined;
  };
  if (!opts.peek) recoverClaims(store, agent);
  let taken = take(undefined);
  if (!taken && opts.wait) {
    let lastRecovery = Date.now();
    // Every RECOVER_MS the whole inbox is looked at again, claims of dead readers first.
    const takeOrRecover = (id: string | undefined) => {
      if (id === undefined && !opts.peek && Date.now() - lastRecovery >= RECOVER_MS) {
        lastRecovery = Date.now();
        try {
          recoverClaims(store, agent);
        } catch {
          // a transient filesystem error: the next tick retries
        }
      }
      return take(id);
    };
    const outcome = await waitUntil(store, { on: "inbox", agent }, takeOrRecover, { ...opts, recheckMs: RECOVER_MS });
    if (outcome.kind !== "done") return ended(outcome.kind, [], [agent]);
    taken = outcome.value;
  }
  if (!taken) return done([]);
  const msgs = taken.map((t) => t.msg);
  if (opts.peek) {
    await show(msgs.map((m) => ({ ...m, state: "unread" })));
    return done(msgs);
  }
  try {
    await show(msgs);
  } catch (err) {
    for (const t of taken) release(store, agent, t.path, t.msg.id);
    throw err;
  }
  for (const t of taken) settle(store, agent, t.path, t.msg.id, "cur");
  return done(msgs);
}

// A file in new/ that is not a message: moved out of the way so it is not read again, and
// named to the reader (a sender's mail it never gets must not vanish without a word).
function quarantine(store: Store, agent: string, path: string, id: string, told?: (file: string) => void): void {
  ensureDir(store, badDir(store, agent), "owner"); // the reader's own, as the rest of its inbox
  const dest = msgFile(badDir(store, agent), id);
  if (moveMessage(store, path, dest, `quarantining message ${id}`)) told?.(dest); // false: moved already
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

