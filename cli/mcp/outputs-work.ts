// The output schemas of the work tools (tasks, leases, files, search): see outputs.ts.

import { z } from "zod";

import { B, N, notOk, result, S, said, SN, Ss, waited } from "./outputs-shapes";

const attachments = z.array(z.object({ digest: S, name: S, size: N, type: S }));
const damaged = z.array(z.object({ kind: S, name: S, file: S, why: S }));
const finished = { id: S, queue: S, attempt: N, state: S, reason: SN };
const task = z.object({
  id: S, queue: S, state: S, version: N, payload: S, size: N, key: SN, after: Ss, blocked_by: Ss, attempt: N, attempts_left: N, max_attempts: N,
  assignee: SN, lease_expires_at: N.nullable(), deadline: N.nullable(),
  attempts: z.array(z.object({ attempt: N, assignee: S, claimed_at: N, ended_at: N, outcome: S, reason: S })),
  result: SN, attachments: attachments.optional(), reason: SN, retry_id: SN.optional(), created_at: N, updated_at: N,
});
const brief = z.object({
  id: S, queue: S, state: S, attempt: N, max_attempts: N, assignee: SN, blocked_by: Ss, payload_preview: SN, result_preview: SN, reason: SN, created_at: N,
});
const leases = z.array(z.object({ name: S, holder: S, taken_at: N, expires_at: N }));
const reservations = z.array(z.object({ pattern: S, holder: S, exclusive: B, reason: SN, expires_at: N, until: S }));

export const WORK_OUTPUTS: Record<string, z.ZodObject> = {
  task_add: result({ ...said, id: S, queue: S, created: B }),
  task_claim: result({ ...notOk, 
    id: S, queue: S, attempt: N, token: S, assignee: S, payload: S, expires_at: N, lease_sec: N, max_attempts: N, replayed: B, untrusted: S,
    reason: S, claimed: N, blocked: N, damaged, ...waited,
  }),
  task_renew: result({ ...said, id: S, attempt: N, expires_at: N }),
  task_done: result({ ...finished, ...said }),
  task_fail: result({ ...finished, ...said }),
  task_wait: result({ ...notOk, 
    ids: Ss, results: z.record(S, z.object({ result: SN, queue: S, attempt: N })), left_out: Ss, untrusted: S, id: S, reason: SN, pending: Ss, ...waited,
  }),
  task_list: result({ ...said, 
    tasks: z.array(brief), total: N, claimable: z.array(z.object({ queue: S, claimable: N, oldest_id: S, oldest_created_at: N })), damaged, untrusted: S,
  }),
  task_show: result({ task, untrusted: S }),
  task_retry: result({ ...said, id: S, queue: S, state: S }),
  task_cancel: result({ ...said, id: S, queue: S, state: S, reason: SN }),
  lease_take: result({ ...notOk, leases, names: Ss, held: Ss, ...waited }),
  lease_renew: result({ leases }),
  lease_release: result({ released: Ss }),
  lease_list: result({ leases }),
  reserve_files: result({ ...notOk, reservations, paths: Ss, held: Ss, ...waited }),
  release_files: result({ released: Ss }),
  list_reservations: result({ root: S, reservations }),
  search: result({ count: N, hits: z.array(z.object({ kind: S, id: S, author: SN, time: N, snippet: S })), untrusted: S }),
};
