// `a2a init`: make a store on purpose (lib/core/init.ts), private or shared with a group.

import type { Command } from "commander";
import { json, out } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  init: (p: Command) =>
    command(p, "init", {
      summary: "make a store: private (yours) or shared with a group of OS users",
      description: "Make the store (--dir, else $A2A_DIR, else ~/.a2a) in a new or empty directory, with its marker. Private (the default): yours alone, mode 0700, as any first use makes it. --shared GROUP: for several OS users on one machine (or one NFS export): the directory is given to GROUP with mode 3770 (setgid, sticky) and its top-level directories are made now, so no member owns one; every file is 0640 (members read; only the writer can change it); topics, inboxes and session records are in sticky directories (nobody renames or removes another's messages, inbox or policy), and the owner of each message file is real evidence of its sender. An existing store is left as it is. Members need no setting: the marker says the store is shared.",
      examples: ["a2a init", "sudo groupadd agents; sudo usermod -aG agents alice; a2a init --shared agents --dir /srv/a2a", "A2A_DIR=/srv/a2a a2a whoami --as bob"],
      json: "print the store's marker as JSON",
    })
      .option("--shared <group>", "share the store with this group of OS users")
      .action(action(async (c: Ctx, o) => {
        const r = await c.bus.admin.init(o.shared);
        if (c.json) return out(json({ root: c.bus.where, created: r.created, ...r.marker }));
        const what = r.marker.mode === "shared" ? `shared store${r.marker.group ? ` of group ${r.marker.group}` : ""}` : "private store";
        out(r.created ? `made the ${what} ${c.bus.where}\n` : `${c.bus.where} is already an a2a ${what}; nothing changed\n`);
      })),
};
