// What each tool's result is (its outputSchema), so a client can check every result it gets
// (the SDK's Client does, once it has listed the tools; the SDK's server checks them too).
// A result is one flat object per tool: `ok`, then the fields of every path the tool can take,
// each optional, since most are on one path only (ok: true carries the answer; an expected
// outcome, ok: false, carries `error` and `message` and what it is about). `unread` is the
// unread-mail note any result may carry (result.ts). Tool errors (isError) carry code and data
// and are not checked. Field types are exact; what a result leaves out is left out of the JSON
// (so optional), and a result may gain fields: compact.ts drops `additionalProperties: false`
// from the list, and tests/harness/mcp.ts checks in the tests that every field is declared.
//
// server.ts attaches OUTPUTS[name] to each tool as it is registered; the work tools' are in
// outputs-work.ts. Every byte of these is in tools/list (toolsets.ts LIST_BUDGET): no
// descriptions, shapes shared.

import { z } from "zod";
import { WORK_OUTPUTS } from "./outputs-work";
import { B, N, NN, notOk, result, S, said, SN, Ss, waited } from "./outputs-shapes";

const attachment = z.object({ digest: S, name: S, size: N, type: S, resource: S.optional(), path: S.optional() });
const attachments = z.array(attachment);

const record = { result: SN, published_at: NN, version: N, task: S, started_at: N, attachments };
const sent = { id: S, from: S, to: S, sent_at: N, size: N, duplicate: B, attachments, thread: S, did_you_mean: S };
const mail = { id: S, from: S, user: S, sent_at: N, reply_to: SN, thread: S.optional(), body: S, attachments: attachments.optional() };
const peer = z.object({
  id: S, name: S, state: S, since: NN, on: SN, task: z.object({ queue: S, id: S }).nullable(), reserved: Ss, host: S, pid: N, cwd: S, git_root: SN, tty: SN, summary: S,
  started_at: N, last_seen: N, client: SN, agent: SN,
});

export const OUTPUTS: Record<string, z.ZodObject> = {
  agent_start: result({ ...said, name: S, task: S, version: N, started_at: N }),
  agent_publish: result({ ...said, name: S, published_at: NN, version: N, size: N, attachments }),
  // agent2agent's agent_status has no `ok`.
  agent_status: result({
    agents: z.array(z.object({ name: S, task: S, status: S, started_at: N, published_at: NN, result_preview: SN, version: N, chunks: N })),
    total: N, done: N, running: N, left_out: Ss, untrusted: S, ...said,
  }).partial(),
  agent_clear: result({ ...notOk, name: S }),
  agent_append: result({ ...said, name: S, chunks: N, version: N }),
  agent_tail: result({ ...notOk, name: S, chunks: Ss, count: N, next: N, more: B, status: S, version: N, untrusted: S }),
  agent_wait: result({ ...notOk, name: S, ...record, ...waited, untrusted: S, state: S }),
  agent_wait_all: result({ ...notOk, names: Ss, any: B, results: z.record(S, z.object({ ...record, attachments: attachments.optional() })), left_out: Ss, ...waited, untrusted: S, done: Ss, pending: Ss }),
  send_message: result({ ...sent, ...said }),
  reply: result({ ...sent, ...said }),
  check_messages: result({ count: N, more: B, messages: z.array(z.object(mail)), untrusted: S }),
  read_thread: result({ thread: S, count: N, left_out: N, messages: z.array(z.object({ ...mail, to: S, thread: S, state: S })), untrusted: S }),
  ack_messages: result({ acked: Ss, already: Ss, missing: Ss }),
  list_peers: result({ scope: S, you: S, peers: z.array(peer), count: N }),
  set_summary: result({ name: S, summary: S }),
  whoami: result({ name: S, source: S, host: S, user: S, cwd: S, git_root: SN, policy: S, store: S, unread_count: N, summary: S }),
  publish_topic: result({ ...said, topic: S, id: N }),
  read_topic: result({ pattern: S, count: N, more: B, messages: z.array(z.object({ topic: S, id: N, from: S, sent_at: N, body: S })), untrusted: S }),
  agent_send: result({ ...said, id: N, channel: S, sender: S, created_at: N }),
  agent_recv: result({ channel: S, messages: z.array(z.object({ id: N, sender: S, content: S, created_at: N })), count: N, next_since_id: N, more: B, tip: S, untrusted: S }),
  ...WORK_OUTPUTS,
};
