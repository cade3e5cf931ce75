// `whoami`: who this process is on the bus (lib/presence/identity.ts) and what waits for it
// (lib/mail/): unread count and policy. Top-level because it joins presence and mail.

import { resolve } from "node:path";
import type { Store } from "../core/config";
import { unreadCount } from "../mail/inbox";
import { readPolicy, type PolicyMode } from "../mail/policy";
import { mailStorage } from "../mail/storage";
import { gitRoot, type Identity, type NameSource } from "../presence/identity";

export interface WhoAmI {
  name: string;
  source: NameSource;
  host: string;
  user: string;
  cwd: string;
  git_root: string | null;
  unread: number;
  policy: PolicyMode;
  store: string;
}

export async function whoami(store: Store, id: Identity, cwd: string): Promise<WhoAmI> {
  const user = await mailStorage(store).writer();
  return {
    name: id.name,
    source: id.source,
    host: store.host,
    user,
    cwd: resolve(cwd),
    git_root: gitRoot(cwd),
    unread: await unreadCount(store, id.name),
    policy: (await readPolicy(store, id.name)).mode,
    store: store.root,
  };
}
