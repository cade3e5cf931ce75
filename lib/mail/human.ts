// The person at the dashboard as a sender (PROTOCOL.md §10, "Mail from the person"): `a2a ui`
// writes to a session as the human, under a sender name no agent can take (HUMAN: names never
// start with "@", lib/core/names.ts), so the name itself is the mark and the record needs no
// field of its own (on PostgreSQL no column, no schema step).
//
// Invariants:
// - the mark counts only when the message's writer (the OS user owning its file; the role the
//   server saw) is the owner of the inbox it is in, as the engine tells it (lib/mail/storage.ts
//   PolicyRead owner) and that owner is the one reading (lib/mail/policy.ts readGate): the
//   same person the session runs as. The owner alone is not enough: it is whoever opened the
//   inbox first, which may be another user. Otherwise it is ordinary mail under the
//   recipient's policy, from a name no allowlist can hold;
// - a message whose mark counts is never held or refused by the recipient's policy
//   (lib/mail/policy.ts refusal), and readers are told so (`human: true` on the message);
// - nothing is answered to HUMAN: it has no inbox (lib/mail/send.ts replyTo says where to answer);
// - `a2a import` writes a HUMAN record under IMPORTED_HUMAN (lib/move/import.ts): an export does
//   not say who wrote a message, and every imported one is the importer's, so under HUMAN its
//   mark would count for the importer's sessions, whoever typed it (a false claim in the source
//   store, or a line written into the export by hand, would become the user's own words).

import { HUMAN } from "../core/names";
import type { Message } from "./message";

export { HUMAN };
export const IMPORTED_HUMAN = "@human.imported"; // no agent's name either: it starts with "@"

// Whether `m`, in an inbox owned by `owner`, is the person's own message.
export const isHuman = (m: Pick<Message, "from"> & { user?: string }, owner: string | undefined): boolean =>
  m.from === HUMAN && owner !== undefined && m.user === owner;

// The mark a reader adds to `m` (nothing when it does not count).
export const humanMark = (m: Pick<Message, "from"> & { user?: string }, owner: string | undefined): { human?: true } =>
  isHuman(m, owner) ? { human: true } : {};
