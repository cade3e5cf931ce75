// The opencode plugin `a2a setup opencode` writes (plugins/a2a.js in opencode's config directory,
// or .opencode/plugins/a2a.js in a project): opencode has no command hooks, so this small plugin
// is a2a's hooks there. It decides nothing itself: each hook runs `a2a hook EVENT --agent
// opencode` (the rules stay in lib/sessions/hooks.ts) and does what the answer says
// (cli/agents/opencode.ts opencodeHook: {context}, {block} or {deny}, or nothing).
//   each model request of a session  session-start the first time, then user-prompt-submit: what
//                                    a2a says is added to the system prompt for the rest of the turn
//   the session goes idle            stop: while unread mail waits, the session is prompted again
//                                    with the reason (the continuation is marked, so a2a's loop
//                                    guard holds: never twice for the same mail)
//   write, edit, apply_patch         pre-tool-use: the call is refused (thrown) when it would
//                                    write a file another agent reserved
// a2a owns the file whole: --remove deletes it. The text is a pure function of the a2a command,
// so setup twice changes nothing.

import type { A2ACommand } from "./agent";
import template from "./opencode-plugin.asset.js" with { type: "text" };

// The plugin's first line: how doctor and setup know the file is a2a's.
export const PLUGIN_MARK = "// a2a for opencode: written by `a2a setup opencode`";

// The plugin for this a2a command (and --worker wait): opencode-plugin.asset.js, an asset embedded in the
// binary, with its three blanks filled.
export function pluginText(cmd: A2ACommand, waitSec?: number): string {
  return template
    // Functions, not strings: a "$&" in a path must not be read as a replacement pattern.
    .replace("__A2A__", () => JSON.stringify([cmd.command, ...cmd.pre]))
    .replace("__STOP_ARGS__", () => JSON.stringify(waitSec ? ["--wait", `${waitSec}s`] : []))
    .replace("__STOP_LIMIT_SEC__", () => String((waitSec ?? 0) + 30));
}
