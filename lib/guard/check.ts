// What the guard's hooks decide: the paths a commit (or a push) changes, checked against the
// repository's reservations (lib/reservations/reserve.ts blockers) as the committer.
//
// The committer is the one rule every command uses (lib/presence/session-name.ts actingAgent):
// $A2A_AGENT, else the session's name in the hook's directory, as `a2a whoami` there says.
// A path is blocked when a live EXCLUSIVE reservation of another holder covers it; the
// committer's own reservations, shared ones and free paths pass. Reading only: nothing is
// written, in the store or the repository.

import { join } from "node:path";
import type { Store } from "../core/config";
import { actingAgent } from "../presence/session-name";
import { blockers } from "../reservations/reserve";
import type { Reservation } from "../reservations/storage";
import { parsePushLines, pushedPaths, stagedPaths, workTree } from "./git";

export interface GuardVerdict {
  as: string | null; // the committer (or pusher), worked out only when something is blocked
  top: string; // the work tree the paths are relative to
  checked: number; // how many paths
  blocked: { path: string; by: Reservation }[];
}

// The committer's name is looked up (a read of the presence records) only to word a refusal:
// blockers itself works it out only when someone else's reservation covers a path.
async function judge(store: Store, top: string, paths: string[], as: string | undefined, cwd: string): Promise<GuardVerdict> {
  // Absolute paths: the committer is worked out in `cwd` (as whoami there), git's paths are top's.
  const blocked = paths.length ? await blockers(store, paths.map((p) => join(top, p)), { as, cwd }) : [];
  const me = blocked.length ? (await actingAgent(store, as, cwd)).name : null;
  return { as: me, top, checked: paths.length, blocked };
}

// The next commit of the work tree `cwd` is in: its staged paths.
export async function guardCommit(store: Store, opts: { cwd: string; as?: string }): Promise<GuardVerdict> {
  const top = workTree(opts.cwd);
  return judge(store, top, stagedPaths(top), opts.as, opts.cwd);
}

// A push to `remote`, as git's pre-push stdin (`input`) describes it: the paths of the commits
// it sends (git.ts pushedPaths).
export async function guardPush(store: Store, opts: { cwd: string; as?: string; remote: string; input: string }): Promise<GuardVerdict> {
  const top = workTree(opts.cwd);
  return judge(store, top, pushedPaths(top, opts.remote, parsePushLines(opts.input)), opts.as, opts.cwd);
}
