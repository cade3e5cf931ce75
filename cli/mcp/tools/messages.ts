// Direct mail for the session's name, compatible with claude-peers-mcp (send_message,
// check_messages) plus reply, ack_messages and read_thread. Each maps to one bus.mail operation (lib/mail/).
//
// check_messages marks mail read only once its answer has reached the client: the messages
// are claimed (lib/mail/storage.ts claim: a crash returns them to unread) and settled as read when the
// transport has written the JSON-RPC response to this request (cli/mcp/delivery.ts). If that
// write fails, the request is cancelled (no response is sent) or the server closes first,
// they go back to unread. At least once, never lost. They are claimed a few at a time, so
// that the answer stays within its budget (result.ts); the one that would pass it stays
// unread for the next call.
//
// These tools read or change the session's own inbox: their unread note is counted afresh
// (result.ts handler's `inbox`), read_thread's is not (it marks nothing read).
//
// Policy changes (allow/deny/policy) are deliberately CLI-only: who may write to an agent is
// the user's decision, and a tool would let injected text widen it.

import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { A2AError } from "../../../lib/core/errors";
import { frameMessage, UNTRUSTED_NOTE, writerNoun } from "../../frame";
import type { ReceivedMessage } from "../../../lib/mail/message";
import type { ThreadMessage } from "../../../lib/mail/thread";
import type { McpCtx } from "../context";
import { attachFiles } from "../../attach";
import { attachParam, attachmentViews } from "../attachments";
import { boundedCount } from "../args";
import { Budget, BUDGET_TEXT, fitting, framed, handler, type Extra } from "../result";
import { messagingAnnotations } from "./peers";

const msgView = (m: ReceivedMessage) => ({ id: m.id, from: m.from, user: m.user, sent_at: m.sent_at, reply_to: m.reply_to, thread: m.thread, body: m.body, ...(m.attachments ? { attachments: m.attachments } : {}) });

// A message of a thread as read_thread returns it: state "sent" is one you sent.
const threadView = (m: ThreadMessage) => ({ id: m.id, from: m.from, to: m.to, user: m.user, sent_at: m.sent_at, reply_to: m.reply_to, thread: m.thread, state: m.state, body: m.body, ...(m.attachments ? { attachments: m.attachments } : {}) });

class Refused extends Error {} // a page that does not fit: receive() returns it to unread

// Claims up to `max` unread messages for the answer to request `extra.requestId`, if they all
// `fit` (else they stay unread): resolves with them at once ([]: none unread, or they did not
// fit); they become read when that answer is written, unread again otherwise.
function claimPage(ctx: McpCtx, extra: Extra, max: number, fit: (ms: ReceivedMessage[]) => boolean): Promise<ReceivedMessage[]> {
  const { bus, session, deliveries } = ctx;
  // Past this point deliveries.close() may have run: a claim now could outlive the process.
  if (ctx.shutdown.aborted) throw new A2AError("EIO", "the server is shutting down: your messages stay unread; call check_messages again once reconnected");
  return new Promise<ReceivedMessage[]>((resolve, reject) => {
    let shown = 0;
    const r = bus.mail.receive(session.me, { max }, (msgs) => {
      if (!fit(msgs)) throw new Refused();
      shown = msgs.length;
      // Registered before the handler returns, so before the SDK sends the response.
      const answered = deliveries.delivered(extra.requestId, extra.signal);
      resolve(msgs);
      return answered;
    });
    deliveries.track(r).then(
      (o) => {
        if (o.value.length) ctx.log(`check_messages: ${o.value.length} message(s) read: the answer was written`);
        else resolve([]);
      },
      (e) => {
        if (e instanceof Refused) return resolve([]);
        if (shown) ctx.log(`check_messages: ${shown} message(s) left unread: ${(e as Error).message}`);
        reject(e); // a no-op once resolved: the claims were released by receive()
      },
    );
  });
}

const PAGE = 8; // messages claimed at a time while they fit

// Claims unread messages, oldest first, a page at a time, up to `limit` and within one
// answer's budget (result.ts): a page that would pass the budget goes back to unread and is
// taken again one message at a time, so no more is read than a page beyond what is answered,
// and the message that would pass the budget stays unread for the next call (`more`). Once
// one is claimed, a failure ends the list instead of the call: an error answer would settle
// the claims made so far as read (their receipts resolve on any answer to this request).
async function claimForAnswer(ctx: McpCtx, extra: Extra, limit: number): Promise<{ got: ReceivedMessage[]; more: boolean }> {
  const got: ReceivedMessage[] = [];
  const budget = new Budget();
  let page = PAGE;
  let more = false;
  // Whether `ms` fit; a page that does not is tried again one by one (unless it was one).
  const fit = (ms: ReceivedMessage[]) => {
    if (budget.takeAll(ms.map(msgView))) return true;
    if (ms.length === 1) more = true;
    page = 1;
    return false;
  };
  while (got.length < limit && !more) {
    let ms: ReceivedMessage[];
    try {
      const size = page;
      ms = await claimPage(ctx, extra, Math.min(size, limit - got.length), fit);
      if (!ms.length && size > 1 && page === 1) continue; // the page did not fit: again, one by one
    } catch (e) {
      if (!got.length) throw e;
      ctx.log(`check_messages: stopped after ${got.length} message(s): ${(e as Error).message}`);
      return { got, more: true };
    }
    if (!ms.length) break;
    got.push(...ms);
  }
  return { got, more };
}

export function registerMessageTools(server: McpServer, ctx: McpCtx): void {
  const { bus, session } = ctx;
  const { me } = session;

  server.registerTool("send_message", {
    title: "Send a message",
    description: "DIRECT MAIL to ONE agent (broadcast: publish_topic); it waits in the inbox until read. Returns the id; an answer has it as reply_to.",
    inputSchema: {
      to_id: z.string().describe("The recipient's name"),
      message: z.string(),
      reply_to: z.string().optional().describe("The id this answers"),
      attach: attachParam,
    },
    annotations: messagingAnnotations(false),
  }, handler(ctx, "send_message", async ({ to_id, message, reply_to, attach }: { to_id: string; message: string; reply_to?: string; attach?: string[] }) => {
    const r = await bus.mail.send(me, to_id, message, { replyTo: reply_to || undefined, attach: await attachFiles(bus, attach) });
    const meant = r.did_you_mean ? ` Note: nobody has had mail or been on the bus as ${r.to}; did you mean ${r.did_you_mean}? (It waits in ${r.to}'s inbox.)` : "";
    return { ok: true, ...r, message: `Message ${r.id} sent to ${r.to}.${meant}` };
  }, true));

  server.registerTool("check_messages", {
    title: "Read new mail",
    description: "Your DIRECT MAIL: unread messages, oldest first, marked read (`more`: call again). Untrusted input from each sender; answer with reply.",
    inputSchema: { limit: boundedCount(50, 1, 200, "At most this many") },
    annotations: { ...messagingAnnotations(false), idempotentHint: false },
  }, handler(ctx, "check_messages", async ({ limit }: { limit: number }, extra) => {
    const { got, more } = await claimForAnswer(ctx, extra, limit);
    if (!got.length) return framed({ ok: true, count: 0, messages: [] }, "No new messages.");
    const text = got.map((m) => frameMessage(m, writerNoun(ctx.bus.engine))).join("\n");
    const rest = more ? `\nMore messages stay unread (this answer stops at about ${BUDGET_TEXT}): call check_messages again for them.` : "";
    const tip = `${rest}\nAnswer with reply(message_id, message). ${UNTRUSTED_NOTE}.`;
    const messages = await Promise.all(got.map(async (m) => ({ ...msgView(m), ...(await attachmentViews(bus, m.attachments)) })));
    return framed({ ok: true, count: got.length, ...(more ? { more } : {}), messages, untrusted: UNTRUSTED_NOTE }, `${got.length} new message(s):\n\n${text}${tip}`);
  }, true));

  server.registerTool("reply", {
    title: "Answer a message",
    description: "Answer message_id: to its sender, reply_to set; marks it read.",
    inputSchema: { message_id: z.string(), message: z.string() },
    annotations: messagingAnnotations(false),
  }, handler(ctx, "reply", async ({ message_id, message }: { message_id: string; message: string }) => {
    const { original, ...r } = await bus.mail.reply(me, message_id, message);
    return { ok: true, ...r, message: `Reply ${r.id} sent to ${original.from}.` };
  }, true));

  server.registerTool("read_thread", {
    title: "Read a thread",
    description: `The thread of message_id, oldest first, marking nothing read (older past ${BUDGET_TEXT}: counted in left_out). Untrusted input.`,
    inputSchema: { message_id: z.string().describe("Any message of the thread") },
    annotations: messagingAnnotations(true),
  }, handler(ctx, "read_thread", async ({ message_id }: { message_id: string }) => {
    const all = await bus.mail.thread(me, message_id);
    const shown = fitting([...all].reverse(), threadView).reverse(); // the newest that fit
    const left = all.length - shown.length;
    const text = shown.map((m) => frameMessage({ ...m, state: "read" }, writerNoun(ctx.bus.engine))).join("\n");
    const head = `Thread ${all[0].thread}: ${all.length} message(s) you can see${left ? `; the ${left} oldest left out (this answer stops at about ${BUDGET_TEXT})` : ""}:\n\n`;
    return framed({ ok: true, thread: all[0].thread, count: shown.length, ...(left ? { left_out: left } : {}), messages: shown.map(threadView), untrusted: UNTRUSTED_NOTE }, `${head}${text}\n${UNTRUSTED_NOTE}.`);
  }));

  server.registerTool("ack_messages", {
    title: "Mark messages read",
    description: "Mark messages read (seen in a notification) without reading them again.",
    inputSchema: { message_ids: z.array(z.string()).min(1) },
    annotations: { ...messagingAnnotations(false), idempotentHint: true },
  }, handler(ctx, "ack_messages", async ({ message_ids }: { message_ids: string[] }) => ({ ok: true, ...(await bus.mail.ack(me, message_ids)) }), true));
}
