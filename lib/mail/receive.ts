// Reading direct messages: receive (recv, check_messages) and request (send --wait-reply).
//
// How a message is read:
//   1. recover claims of dead readers (lib/claim.ts recoverClaims);
//   2. claim the oldest unread messages, up to `max` (rename new/ -> claim/; a message another
//      reader claimed first is skipped); with `match`, a message is read in new/ first and
//      only claimed if it matches;
//   3. a claimed file that is not a valid message goes to bad/; one from a sender the policy
//      refuses goes to held/ (lib/policy.ts);
//   4. hand the rest to `show`, which writes them out;
//   5. when `show` has returned, move them to cur/: at that instant they are read. If `show`
//      throws (stdout closed) they go back to new/; if the reader dies, step 1 of the next
//      reader returns them.
// With `peek` nothing moves. With `wait`, steps 2-5 run on every change in new/ (lib/watch.ts
// waitUntil) until something was taken, and step 1 repeats every RECOVER_MS, so mail whose
// reader died is picked up by a waiting reader too.

import { renameSync } from "node:fs";
import { join } from "node:path";
import { A2AError } from "../core/errors";
import { claim, recoverClaims, release, RECOVER_MS, settle } from "./claim";
import { sendMessage, type SendOptions, type SendResult } from "./send";
import { badDir, checkAgent, ensureInbox, idOfFile, idsIn, msgFile, newDir, readMessageFile, type MailSettings, type Message, type ReceivedMessage } from "./message";
import { accepts, readPolicy } from "./policy";
import { ensureDir, type Store } from "../core/config";
import { waitUntil, type WaitOptions } from "../core/watch";

export interface ReceiveOptions extends WaitOptions {
  wait?: boolean; // block until at least one message is there
  peek?: boolean; // show without marking read
  max?: number; // at most this many (default 1)
  match?: (m: Message) => boolean; // only messages passing this (others stay unread)
}

type Taken = { msg: ReceivedMessage; path: string };

// Shows unread messages of `agent` through `show` (oldest first) and marks them read after it
// returns (or its promise resolves: the MCP server resolves once its answer is on the wire).
// Returns what was shown: [] when nothing was there (or the wait was aborted).
export async function receive(
  store: Store,
  settings: MailSettings,
  agent: string,
  opts: ReceiveOptions,
  show: (msgs: ReceivedMessage[]) => void | Promise<void>,
): Promise<ReceivedMessage[]> {
  checkAgent(agent);
  ensureInbox(store, agent);
  const max = opts.max ?? 1;
  const take = (file: string | undefined): Taken[] | undefined => {
    const only = file === undefined ? undefined : idOfFile(file);
    if (file !== undefined && !only) return undefined;
    const policy = readPolicy(store, agent);
    const got: Taken[] = [];
    for (const id of only ? [only] : idsIn(newDir(store, agent))) {
      if (got.length >= max) break;
      const newPath = msgFile(newDir(store, agent), id);
      if (opts.peek || opts.match) {
        const m = readMessageFile(store, newPath, id, "unread");
        if (typeof m !== "object" || !accepts(policy, m.from)) continue; // held at the next real read
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
      if (m === "corrupt") quarantine(store, agent, path, id);
      else if (!accepts(policy, m.from)) settle(store, agent, path, id, "held");
      else got.push({ msg: m, path });
    }
    return got.length ? got : undefined;
  };
  if (!opts.peek) recoverClaims(store, agent, settings);
  let taken = take(undefined);
  if (!taken && opts.wait) {
    const recover = () => {
      try {
        recoverClaims(store, agent, settings);
      } catch {
        // a transient filesystem error: the next tick retries
      }
    };
    const timer = opts.peek ? undefined : setInterval(recover, RECOVER_MS);
    try {
      taken = await waitUntil(store, newDir(store, agent), take, opts);
    } finally {
      if (timer) clearInterval(timer);
    }
    if (!taken && !opts.signal?.aborted) {
      throw new A2AError("ETIMEDOUT", `no message for ${agent} arrived in time: raise --timeout, or check who writes to ${agent} (a2a peers)`);
    }
  }
  if (!taken) return [];
  const msgs = taken.map((t) => t.msg);
  if (opts.peek) {
    await show(msgs.map((m) => ({ ...m, state: "unread" })));
    return msgs;
  }
  try {
    await show(msgs);
  } catch (err) {
    for (const t of taken) release(store, agent, t.path, t.msg.id);
    throw err;
  }
  for (const t of taken) settle(store, agent, t.path, t.msg.id, "cur");
  return msgs;
}

// A file in new/ that is not a message: moved out of the way so it is not read again.
function quarantine(store: Store, agent: string, path: string, id: string): void {
  ensureDir(store, badDir(store, agent));
  try {
    renameSync(path, join(badDir(store, agent), `${id}.json`));
  } catch {
    // moved already
  }
}

// Sends `body` and waits for the message answering it (reply_to = its id) in `from`'s inbox.
export async function request(
  store: Store, settings: MailSettings, from: string, to: string, body: string, opts: SendOptions & WaitOptions,
  show: (sent: SendResult, reply: ReceivedMessage) => void,
): Promise<{ sent: SendResult; reply?: ReceivedMessage }> {
  const sent = sendMessage(store, settings, from, to, body, opts);
  let reply: ReceivedMessage | undefined;
  await receive(store, settings, from, { ...opts, wait: true, max: 1, match: (m) => m.reply_to === sent.id }, (ms) => {
    reply = ms[0];
    show(sent, ms[0]);
  });
  return { sent, reply };
}

