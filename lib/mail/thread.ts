// Threads of direct mail: which thread a message is in, and a conversation read whole
// (`a2a thread`, MCP read_thread). What a thread is: lib/mail/message.ts (namedThread,
// threadsOf); the storage finds a thread's messages (lib/mail/storage.ts locate, thread).
//
// Invariants:
// - reading a thread changes nothing: no message is claimed, moved or marked read;
// - an agent sees of a thread only what it could read anyway (canSee): the messages of its own
//   inbox (unread, claimed, read; not held: a refused sender's mail is never shown, PROTOCOL.md
//   §10) and the messages it wrote, wherever they are (its name as the sender, and the writer
//   the store vouches for this process's);
// - a thread is named by the id of the message that began it, whether or not the reader can
//   see that message.

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { checkAgent } from "../core/names";
import { checkMessageId, namedThread, type Message, type MessageState, type ReceivedMessage } from "./message";
import { humanMark } from "./human";
import { accepts, readGate, type Gate } from "./policy";
import { mailStorage, type At, type Filed, type MailStorage } from "./storage";

// How many parents a reply written before threads is followed through (a hand-made record may
// answer itself).
const MAX_HOPS = 1000;

// A message as a thread shows it: its state in the reader's inbox, or "sent" when it is one the
// reader wrote to another agent.
export interface ThreadMessage extends Omit<ReceivedMessage, "state"> {
  thread: string;
  state: MessageState | "sent";
}

// The thread message `m` is in: the one its record names, else (a reply written before threads)
// its parent's, followed through the store.
export async function threadOf(mail: MailStorage, m: Pick<Message, "id" | "reply_to" | "thread">): Promise<string> {
  let at = m;
  for (let hops = 0; ; hops++) {
    const named = namedThread(at);
    if (named !== undefined) return named;
    const parent = hops < MAX_HOPS ? (await mail.locate(at.reply_to!, 0))[0] : undefined;
    if (!parent) return at.reply_to!;
    at = parent.message;
  }
}

// Whether `agent` may see the message filed at `f`: in its own inbox (held only with `held`;
// unread or claimed only from a sender its policy accepts, as a listing shows them), or written
// by it (`writer`: this process's, as the store vouches for it).
function canSee(f: Filed, agent: string, writer: string, policy: Gate | undefined, held: boolean): boolean {
  if (f.agent === agent) {
    if (f.at === "held") return held;
    return f.at === "read" || !policy || accepts(policy, f.message.from, f.message.user);
  }
  return f.message.from === agent && f.message.user === writer;
}

// The thread a reply from `from` to message `replyTo` joins: its parent's, when `from` can see
// the parent (its inbox, held mail included, or its own sent mail); else the one named by
// `replyTo` (a sender learns nothing of a conversation it is not in).
export async function replyThread(store: Store, from: string, replyTo: string): Promise<string> {
  const mail = mailStorage(store);
  const writer = await mail.writer();
  const parent = (await mail.locate(replyTo, 0)).find((f) => canSee(f, from, writer, undefined, true));
  return parent ? threadOf(mail, parent.message) : replyTo;
}

const stateAt = (at: At): MessageState => (typeof at === "string" ? at : "claimed");

// The conversation containing message `id`, oldest first, as `agent` may see it; bodies whole.
// ENOTFOUND (exit 3) when `agent` can see no message `id`.
export async function readThread(store: Store, agent: string, id: string): Promise<ThreadMessage[]> {
  checkAgent(agent);
  checkMessageId(id);
  const mail = mailStorage(store);
  const writer = await mail.writer();
  const policy = await readGate(store, agent);
  const visible = (f: Filed) => canSee(f, agent, writer, policy, false);
  const start = (await mail.locate(id, 0)).find(visible);
  if (!start) {
    throw new A2AError("ENOTFOUND", text`no message ${id} in the inbox of ${agent} or among the messages ${agent} sent: check the id (${op("inbox")} lists them)`, {
      data: { id, agent },
    });
  }
  const root = await threadOf(mail, start.message);
  return (await mail.thread(root, store.maxBytes)).filter(visible).map(({ agent: inbox, at, message }): ThreadMessage => {
    const { truncated: _, ...m } = message;
    // Only a message in the reader's own inbox can be its owner's: what it sent is its own.
    return { ...m, thread: root, state: inbox === agent ? stateAt(at) : "sent", ...(inbox === agent ? humanMark(m, policy.owner) : {}) };
  });
}
