// The temp file a write of a user's file OUTSIDE any store goes through (lib/core/user-file.ts
// openUserFile: `a2a get -o FILE`, `a2a export -o FILE`, an agent's settings): a dot-name beside
// FILE, `.FILE.a2a-PID.HEX.tmp`, so the rename over FILE is atomic. A process killed before its
// rename leaves that file behind; the next write of FILE removes such leftovers of FILE whose
// process is gone (a regular file of this user, named exactly so, with no live PID on this
// machine), and nothing else.

import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomHex } from "./digest";
import { pidAlive } from "./holder";

const uid = () => process.getuid?.() ?? -1;

// The temp name for a write of `dest` by this process, once the dead ones' are gone.
export function userTemp(dest: string): string {
  sweep(dest);
  return join(dirname(dest), `.${basename(dest)}.a2a-${process.pid}.${randomHex(4)}.tmp`);
}

function sweep(dest: string): void {
  const prefix = `.${basename(dest)}.a2a-`;
  let names: string[];
  try {
    names = readdirSync(dirname(dest)).filter((f) => f.startsWith(prefix));
  } catch {
    return; // a directory we cannot list: the write itself says what is wrong
  }
  for (const name of names) {
    const m = /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length));
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const path = join(dirname(dest), name);
    try {
      const st = lstatSync(path);
      if (st.isFile() && st.uid === uid()) unlinkSync(path);
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
}
