// `a2a init`: make a store on purpose (lib/maintenance/server.ts initStore): a directory,
// private or shared with a group; or a PostgreSQL store's schema, or the SQL that makes it.

import type { Command } from "commander";
import { A2AError, arg, text } from "../../lib/core/errors";
import { json, out } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  init: (p: Command) =>
    command(p, "init", {
      summary: "make a store: private (yours) or shared with a group of OS users; or a PostgreSQL store's schema",
      description: "Make the store (--dir, else $A2A_DIR, else ~/.a2a) in a new or empty directory, with its marker. Private (the default): yours alone, mode 0700, as any first use makes it. --shared GROUP: for several OS users on one machine (or one NFS export): the directory is given to GROUP with mode 3770 (setgid, sticky) and its top-level directories are made now, so no member owns one; every file is 0640 (members read; only the writer can change it); topics, inboxes and session records are in sticky directories (nobody renames or removes another's messages, inbox or policy), and the owner of each message file is real evidence of its sender. An existing store is left as it is. Members need no setting: the marker says the store is shared. On a PostgreSQL store (postgres://USER@HOST:PORT/DATABASE[?schema=NAME]): make the bus's schema (or bring it to this a2a's version) now rather than on first use; --print-sql prints the SQL instead, with the grants each member's role needs, for a database's administrator to run (nothing connects). Members are roles there, so --shared does not apply.",
      examples: ["a2a init", "sudo groupadd agents; sudo usermod -aG agents alice; a2a init --shared agents --dir /srv/a2a", "A2A_DIR=/srv/a2a a2a whoami --as bob", "a2a init --dir postgres://alice@db.example/team", "a2a init --dir postgres://alice@db.example/team --print-sql > a2a.sql", "a2a init --dir postgres://alice@db.example/team --print-sql --rls > a2a.sql"],
      json: "print the store's marker as JSON (on PostgreSQL: the schema, the version found and the version now)",
    })
      .option("--shared <group>", "share the store with this group of OS users")
      .option("--print-sql", "PostgreSQL: print the SQL that makes the schema, with the grants a role needs, instead of running it")
      .option("--rls", "with --print-sql: add row-level security, so each role reads only the inboxes it owns")
      .action(action(async (c: Ctx, o) => {
        if (o.rls && !o.printSql) throw new A2AError("EUSAGE", text`${arg("rls")} adds row-level security to the SQL of ${arg("printSql")}: use both, and have the database's administrator run it`);
        if (o.printSql) return out(await c.bus.admin.serverSql(o.shared, !!o.rls));
        const r = await c.bus.admin.init(o.shared);
        if (r.kind === "database") {
          const { kind: _, ...facts } = r;
          if (c.json) return out(json({ root: c.bus.where, ...facts }));
          const at = `schema ${r.schema} of ${c.bus.where}`;
          return out(
            r.found === r.version ? `the bus in ${at} is already at version ${r.version}; nothing changed\n`
            : r.created ? `made the bus in ${at} at version ${r.version}\n`
            : `brought the bus in ${at} from version ${r.found} to ${r.version}\n`,
          );
        }
        if (c.json) return out(json({ root: c.bus.where, created: r.created, ...r.marker }));
        const what = r.marker.mode === "shared" ? `shared store${r.marker.group ? ` of group ${r.marker.group}` : ""}` : "private store";
        out(r.created ? `made the ${what} ${c.bus.where}\n` : `${c.bus.where} is already an a2a ${what}; nothing changed\n`);
      })),
};
