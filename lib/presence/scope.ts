// Which peers a listing covers, and the check of a scope given by a user: a rule with no
// storage, so a front end may check its input before it opens anything.
import { A2AError } from "../core/errors";

export type Scope = "all" | "machine" | "directory" | "repo";

export function checkScope(scope: unknown): Scope {
  if (scope !== "all" && scope !== "machine" && scope !== "directory" && scope !== "repo") {
    throw new A2AError("EUSAGE", `invalid scope ${JSON.stringify(scope)}: use machine (this host), directory (same cwd), repo (same git root) or all`);
  }
  return scope;
}
