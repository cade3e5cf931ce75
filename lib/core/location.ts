// Where a store is, as given and as shown: a directory path, or a database URL whose password
// must never be shown. lib/core/config.ts opens the store named here (by the dir option, else
// $A2A_DIR, else ~/.a2a); the opening picks the engine.

import { accessSync, constants, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Store } from "./config";
import { A2AError, arg, ioError, text, type Part } from "./errors";

// A location naming a database rather than a directory (lib/bus.ts chooses the engine by it).
export const URL_SCHEME = /^(postgres|postgresql):\/\//i;

// A location as it may be printed or written into a config: a URL without its password (nor
// any password parameter); the password belongs in PGPASSWORD or ~/.pgpass. Done on the text,
// not through a URL parser: a password holding "/", "?" or "#" makes a parser read part of it
// as a port, path or query, where it would be printed whole. Everything between "://" and the
// last "@" is the user and password; only the user is kept.
export function redact(location: string): string {
  if (!URL_SCHEME.test(location)) return location;
  const start = location.indexOf("://") + 3;
  const at = location.lastIndexOf("@");
  let out = location;
  if (at >= start) {
    const userinfo = location.slice(start, at);
    const colon = userinfo.indexOf(":");
    out = location.slice(0, start) + (colon < 0 ? userinfo : userinfo.slice(0, colon)) + location.slice(at);
  }
  // Parameters whose name speaks of a password, wherever they are (query or fragment).
  return out.replace(/([?&#])[^=&#]*pass[^=&#]*=[^&#]*&?/gi, "$1").replace(/[?&#]+$/, "");
}

// The home directory, as os.homedir() gives it ($HOME when set and not empty, else the user's
// entry in the password database). node:os is loaded only for the second: loading it costs ~3%
// of a command's start-up, and a command given its store (A2A_DIR) needs no home at all.
export const homedir = (): string => process.env.HOME || (require("node:os") as typeof import("node:os")).homedir();

// "~" and "~/x" mean the home directory, as a shell would have expanded them: a path written
// in JSON (an MCP config) or quoted in a script reaches us unexpanded.
export function expandHome(path: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return path;
}

// The root must be a directory, or creatable as one: the nearest existing ancestor is a
// directory this process may write. Nothing is created here (reads of a missing store create
// nothing; the first write does), but a path that can never be a store fails every command
// the same way, before anything else.
export function checkRoot(store: Store): void {
  const where: Part[] = [`the store ${store.root} (from `, store.rootFrom === "dir" ? arg("dir") : store.rootFrom, ")"];
  for (let p = store.root; ; p = dirname(p)) {
    let st;
    try {
      st = statSync(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === "ENOENT" || code === "ENOTDIR") && dirname(p) !== p) continue;
      throw ioError(err, ["opening ", ...where]);
    }
    if (!st.isDirectory()) {
      throw new A2AError("EIO", [...where, ...text` cannot be a directory: ${p} is a file; point ${arg("dir")} or A2A_DIR at a directory`], {
        data: { root: store.root, from: store.rootFrom, blocker: p },
      });
    }
    if (p !== store.root) {
      try {
        accessSync(p, constants.W_OK | constants.X_OK);
      } catch (err) {
        throw ioError(err, ["creating ", ...where, ` in ${p}`]);
      }
    }
    return;
  }
}
