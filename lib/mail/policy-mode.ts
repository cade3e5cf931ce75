// An inbox's policy modes, and the check of one given by a user: a rule with no storage, so a
// front end may check its input before it opens anything.
import { A2AError, op, text } from "../core/errors";

export type PolicyMode = "open" | "allowlist";

export function checkMode(mode: unknown): PolicyMode {
  if (mode !== "open" && mode !== "allowlist") {
    throw new A2AError("EUSAGE", text`invalid policy ${JSON.stringify(mode)}: use open (anyone may write) or allowlist (only names given to ${op("allow")})`);
  }
  return mode;
}
