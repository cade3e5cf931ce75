// Who owns what in a shared store, against what a2a makes: the findings `a2a doctor` reports,
// each with its fix. a2a fixes what its own user can (lib/fs/guard.ts gives a directory of
// its user the sticky bit it lacks); what is left needs another member or root. Top-level
// because it looks across mail, topics and the hooks' session state.
//
// Checked, in a shared store only (a private store is its owner's alone):
// - the root, the top-level directories of STICKY_NAMES, each topic, and each inbox its agent
//   made with the directories in it are sticky;
// - those top-level directories belong to the root's owner (or root): the owner of a sticky
//   directory may still rename or remove anything in it;
// - every directory of an inbox, and its policy, belong to the inbox's owner (the agent's OS
//   user); of an agent's own inbox, new/ and keys/ are sticky and claim/, cur/, held/ and bad/
//   closed to the group's writes; a session record belongs to the owner of its agent's inbox
//   (this user, for the session doctor runs for);
// - blobs/sha256/ is sticky, the store owner's and open to the group's puts (a member owning it
//   could close it to every other put); each blob or copy (lib/fs/blob-files.ts) another
//   member owns is a regular file holding the bytes its name says (a planted file: a2a passes
//   over it, but it takes space and a put of those bytes then makes a copy). Its bytes are
//   hashed only when `hashBlobs` asks, or when the files of one digest differ in size (one of
//   them is wrong): a run of doctor stays fast on a store of large blobs, and a reader checks
//   another's file before trusting it anyway.
// Reading only: nothing is changed here.

import { notOnDatabase } from "../core/errors";
import type { Stats } from "node:fs";
import { join } from "node:path";
import type { Store } from "../core/config";
import { entries, lstatIf } from "../fs/io";
import { checkStore, myUid } from "../fs/guard";
import { GROUP_WRITE, STICKY } from "../fs/modes";
import { userName } from "../fs/owner";
import { blobFileHolds, hexOfName } from "../fs/blob-files";
import { badDir, blobsDir, claimDir, curDir, heldDir, inboxDir, inboxesDir, keysDir, newDir, peerNameOf, policyFile, sessionsDir, STICKY_NAMES, topicDir, topicsDir } from "../fs/paths";
import { isValidName } from "../core/names";

export interface Finding {
  path: string;
  problem: string; // what is wrong, and what it lets someone do
  fix: string; // the command, and who must run it
}


// `me`: the agent name this user's session has here (its inbox and session record must be this user's).
export function auditShared(store: Store, me?: string, opts: { hashBlobs?: boolean } = {}): Finding[] {
  if (store.url !== undefined) throw notOnDatabase("a2a doctor");
  checkStore(store);
  const rootSt = lstatIf(store.root, true);
  if (!store.shared || !rootSt) return [];
  const out: Finding[] = [];
  const who = (uid: number) => `OS user ${userName(store, uid)}`;
  const theirs = (uid: number, owner: number) => uid === owner || uid === 0;
  const sticky = (path: string, st: Stats, also = "") => {
    if (st.isDirectory() && !(st.mode & STICKY)) {
      out.push({ path, problem: `is not sticky: any member can rename or remove what others made in it${also}`, fix: `chmod +t ${path} (as ${who(st.uid)}, its owner, or root)` });
    }
  };
  const owned = (path: string, st: Stats, owner: number, whose: string, harm: string, fix: string) => {
    if (!theirs(st.uid, owner)) out.push({ path, problem: `belongs to ${who(st.uid)}, not to ${who(owner)} (${whose}): ${harm}`, fix });
  };

  sticky(store.root, rootSt);
  for (const name of STICKY_NAMES) {
    const path = join(store.root, name);
    const st = lstatIf(path, true);
    if (!st?.isDirectory()) continue;
    sticky(path, st);
    owned(path, st, rootSt.uid, "the store's owner", "that member can rename or remove anything in it", `chown ${userName(store, rootSt.uid)} ${path} (as root)`);
  }
  auditBlobs(store, rootSt.uid, out, !!opts.hashBlobs);
  for (const topic of entries(store, topicsDir(store))) {
    const st = lstatIf(topicDir(store, topic), true);
    if (st) sticky(topicDir(store, topic), st);
  }
  for (const agent of entries(store, inboxesDir(store)).filter(isValidName)) {
    const dir = inboxDir(store, agent);
    const st = lstatIf(dir, true);
    if (!st?.isDirectory()) continue;
    const owner = st.uid;
    if (me === agent && !theirs(owner, myUid())) {
      out.push({ path: dir, problem: `belongs to ${who(owner)}, not to you: ${agent} is this session's name, and that member can remove its mail and set its policy`, fix: `chown -R ${userName(store, myUid())} ${dir} (as root), or use another name (A2A_AGENT)` });
    }
    sticky(dir, st, `: made by ${who(owner)} (a sender, before ${agent} first read its inbox, or an earlier release)`);
    for (const sub of [newDir, claimDir, curDir, heldDir, badDir, keysDir]) {
      const path = sub(store, agent);
      const s = lstatIf(path, true);
      if (!s?.isDirectory()) continue;
      owned(path, s, owner, `who owns ${dir}`, "that member can remove what is in it", `chown -R ${userName(store, owner)} ${path} (as root)`);
      if (!theirs(s.uid, owner) || !(st.mode & STICKY)) continue;
      if (sub === newDir || sub === keysDir) sticky(path, s);
      else if (s.mode & GROUP_WRITE) {
        out.push({ path, problem: `lets the group write: any member can put a file where ${agent}'s own moves of its mail replace a message`, fix: `chmod g-w ${path} (as ${who(s.uid)}, its owner, or root)` });
      }
    }
    const pst = lstatIf(policyFile(store, agent), true);
    if (pst) owned(policyFile(store, agent), pst, owner, `who owns ${dir}`, "a2a ignores it", `rm ${policyFile(store, agent)} (as ${who(owner)}: the owner of a sticky directory may), then set the policy again`);
  }
  for (const file of entries(store, sessionsDir(store))) {
    const name = peerNameOf(file);
    const path = join(sessionsDir(store), file);
    const st = lstatIf(path, true);
    if (!name || !st) continue;
    const owner = lstatIf(inboxDir(store, name), true)?.uid ?? (name === me ? myUid() : undefined);
    if (owner !== undefined) owned(path, st, owner, `${name}'s`, `a2a ignores it, so the hooks of session ${name} remember nothing`, `rm ${path} (as ${who(st.uid)} or root)`);
  }
  return out;
}

// blobs/sha256/ and the blobs in it (see the head of this file).
function auditBlobs(store: Store, storeOwner: number, out: Finding[], hash: boolean): void {
  const dir = blobsDir(store);
  const st = lstatIf(dir, true);
  if (!st?.isDirectory()) return;
  const who = (uid: number) => `OS user ${userName(store, uid)}`;
  if (st.uid !== storeOwner && st.uid !== 0) {
    out.push({ path: dir, problem: `belongs to ${who(st.uid)}, not to ${who(storeOwner)} (the store's owner): that member can remove any blob or close the directory to everyone else's puts`, fix: `chown ${userName(store, storeOwner)} ${dir} (as root)` });
  }
  if (!(st.mode & STICKY)) out.push({ path: dir, problem: "is not sticky: any member can remove or replace another's blobs", fix: `chmod +t ${dir} (as ${who(st.uid)}, its owner, or root)` });
  if ((st.mode & 0o070) !== 0o070) out.push({ path: dir, problem: "is closed to the group: no other member can store a blob, so every attachment they send fails", fix: `chmod g+rwx ${dir} (as ${who(st.uid)}, its owner, or root)` });
  const planted = (path: string, uid: number) =>
    out.push({ path, problem: `holds other bytes than its name says (from ${who(uid)}): a2a passes over it (a put of those bytes keeps its own copy beside it)`, fix: `rm ${path} (as ${who(uid)} or ${who(st.uid)}, the directory's owner, or root)` });
  const byHex = new Map<string, { path: string; st: Stats }[]>(); // a blob's files: its name's and the copies (lib/fs/blob-files.ts)
  for (const name of entries(store, dir)) {
    const path = join(dir, name);
    const f = lstatIf(path, true);
    const hex = hexOfName(name);
    if (!f) continue;
    if (!hex || !f.isFile()) {
      if (f.uid !== myUid()) planted(path, f.uid);
    } else byHex.set(hex, [...(byHex.get(hex) ?? []), { path, st: f }]);
  }
  for (const [hex, files] of byHex) {
    const check = hash || new Set(files.map((f) => f.st.size)).size > 1;
    for (const f of files) if (check && f.st.uid !== myUid() && !blobFileHolds(f.path, hex, f.st.size)) planted(f.path, f.st.uid);
  }
}
