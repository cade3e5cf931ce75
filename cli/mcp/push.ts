// Inbox push: lib's "new unread mail for AGENT" events (lib/mail/watch-inbox.ts) become
// `notifications/claude/channel` {content, meta} notifications, one per message, from the
// moment the client has finished initializing; a client a2a can wake (wake-ways.ts: Claude Code,
// Codex CLI) gets the wake rule's one wake per batch instead (wake.ts). A push is not a delivery: the message stays
// unread until check_messages returns it, reply answers it, or ack_messages marks it read.
// A notification that cannot be sent (not connected, gone) is forgotten by watchInbox and
// sent again on the next event or tick; the unread note on every result tells meanwhile.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { frameMessage, writerNoun, type Writer } from "../frame";
import type { ReceivedMessage } from "../../lib/mail/message";
import type { McpCtx } from "./context";
import { startWake } from "./wake";
import { wayFor } from "./wake-ways";

function channelNotification(m: ReceivedMessage, writer: Writer) {
  const meta: Record<string, string> = { from: m.from, message_id: m.id, sent_at: new Date(m.sent_at * 1000).toISOString() };
  if (m.reply_to) meta.reply_to = m.reply_to;
  if (m.reply_to && m.thread) meta.thread = m.thread; // read_thread shows the conversation
  return { method: "notifications/claude/channel", params: { content: frameMessage(m, writer), meta } };
}

// Starts pushing once the client is initialized; the returned function stops it.
export function startPush(server: McpServer, ctx: McpCtx): () => void {
  let stop: (() => void) | undefined;
  let started = false;
  let closed = false;
  const prev = server.server.oninitialized;
  server.server.oninitialized = () => {
    prev?.();
    if (closed || started) return;
    started = true;
    // An agent a2a can wake gets one wake per batch of mail (wake.ts), not a push per message.
    const way = wayFor(server, ctx);
    if (way) return void (stop = startWake(ctx, way));
    const onError = (e: unknown) => ctx.warn(`inbox push: ${(e as Error).message}`);
    ctx.bus.mail
      .watch(
        ctx.session.me,
        // The SDK types notifications by its own schema; claude/channel is an extension.
        (m) => server.server.notification(channelNotification(m, writerNoun(ctx.bus.engine)) as Parameters<typeof server.server.notification>[0]),
        onError,
      )
      .then(
        (off) => (closed ? off() : (stop = off)), // stopped while it started: stop it now
        (e) => {
          started = false; // not pushing: a later initialized may try again
          onError(e);
        },
      );
  };
  return () => {
    closed = true;
    stop?.();
  };
}
