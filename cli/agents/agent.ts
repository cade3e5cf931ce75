// What a coding agent is to a2a: where it reads its MCP servers and hooks (what `a2a setup AGENT`
// changes), how `a2a doctor` checks it, and how its hooks speak (what `a2a hook EVENT --agent
// AGENT` reads on stdin and answers on stdout). One module per agent (claude.ts, codex.ts, ...),
// listed in index.ts; cli/commands/setup.ts, doctor.ts and hook.ts are the same for all.
//
// Invariants every agent keeps:
// - setup changes only a2a's own entries (the server named a2a; hook commands that run
//   `a2a ... hook EVENT`, recognised by a2aHookEvent); everything else the user has stays, values
//   and, where the format has them, comments; --remove takes out exactly what setup adds;
// - a change is a pure function of the file's text (no I/O): edit.ts reads, diffs, backs up and
//   writes, so every agent gets --dry-run, backups and "twice changes nothing" the same way;
// - a file a2a cannot parse is not touched: the change throws EUSAGE naming the file and the fix.

export type Scope = "user" | "project";

// The a2a hook events, as a2a names them; each agent maps its own events onto these.
// "wake": not an agent's event but a waiter's (opencode's plugin runs it while a session sits idle).
export type A2AEvent = "session-start" | "user-prompt-submit" | "stop" | "pre-tool-use" | "notification" | "wake";

// How the agent's config runs a2a: this binary's path at user scope, the bare name in a project's
// files (shared with a team whose a2a lives elsewhere); `pre` is `--dir STORE` when the store is
// not the default, so the server and the hooks use the same store.
export interface A2ACommand {
  command: string;
  pre: string[];
}

export interface SetupOptions {
  scope: Scope;
  project: string; // the git root (or the directory) setup runs in
  home: string;
  a2a: A2ACommand;
  tools?: string; // --tools for the registered a2a mcp
  worker?: number; // seconds the stop hook waits for the next message (--worker)
  remove: boolean;
}

// One file's change: the next text from the current one (undefined: the file is absent); the
// same text back means "unchanged"; null: the file should not exist (a file a2a owns whole, such
// as a plugin, taken out by --remove: backed up, then deleted). Throws A2AError(EUSAGE) when the
// text cannot be parsed.
export interface FileChange {
  path: string;
  change(text: string | undefined): string | null;
}

export type Level = "ok" | "note" | "problem";
export interface Check {
  check: string;
  level: Level;
  detail: string;
  fix?: string;
}

export interface DoctorContext {
  project: string;
  cwd: string;
  home: string;
  bin: string | undefined; // the agent's command on PATH
  live: boolean; // doctor --live: ask the agent's CLI itself (its `mcp list`: seconds each); else read its files
}

// A hook event's input, as every agent's hook JSON is read by a2a.
export interface HookInput {
  cwd?: string;
  continuation: boolean; // the stop follows a continuation a2a's stop hook asked for
  files?: string[]; // pre-tool-use: the files the tool call would write (as the tool names them); none: it writes none
  asks?: string; // notification: what the agent asks its user (a permission prompt, a question); none: it asks nothing
  answered?: boolean; // notification: the user answered what the session asked (opencode tells): it works again
  compacted?: boolean; // session-start: after a compaction of the context (Claude Code's source compact, mid-turn when automatic), no new session
  idle?: boolean; // notification: the agent's prompt has sat idle a while (Claude Code's idle_prompt): the session is idle, whatever its turn left
  session?: string; // the agent's own id of the session (its hooks' session_id)
  prompt?: string; // user-prompt-submit: the prompt (the user's, or a2a's wake: lib/sessions/wake-rule.ts); none: the agent did not say it (opencode's own continuations and wakes), which starts the loop guard over not
}

// How an agent's hooks speak. Each answer is the whole stdout; undefined: print nothing (the agent
// goes on as without a hook).
export interface HookFormat {
  input(raw: Record<string, unknown>, event: A2AEvent): HookInput;
  context(event: "session-start" | "user-prompt-submit", text: string): string | undefined;
  block(reason: string): string; // hold a stop: the reason is the model's next instruction
  deny(reason: string): string; // refuse a tool call: the reason is the call's result
  // `a2a hook wake`, for an agent woken by a waiter's end (cli/hook-wake.ts): how its model reads
  // mail (said in the wake), whether the loop guard's hold ends the waiter, and the answer.
  wake?: { read: string; endOnHold: boolean; answer(a: { wake: string } | { held: string }): string };
}

// What a crew worker's agent may do without a human (cli/crew/launch.ts):
// - "edits" (the default): edit files in its working directory, run git's add/commit/status/diff/
//   log, and call a2a's tools; anything else is refused without a prompt (the agent carries on
//   without it): a worker can do and commit its task, and nothing the user did not expect;
// - "all": everything the agent can do, with no prompt (Claude Code's bypassPermissions, Codex
//   without its sandbox, Gemini CLI's yolo, opencode's allow-all): where the machine or container
//   is itself the sandbox.
export type Permissions = "edits" | "all";

export interface HeadlessOptions {
  a2a: string; // the a2a binary its MCP server and hooks run (the store and name: A2A_DIR, A2A_AGENT)
  tools: string; // --tools of its a2a mcp
  permissions: Permissions;
  cwd: string; // where it works (its worktree)
  pass: string[]; // the environment's names its a2a mcp needs (A2A_*, PG*), for agents that filter it
  privateDir: string; // the work tree's own git directory: files of the run that are no file of the work tree
}

// One task, headless: the agent's arguments after its command (the prompt comes on stdin), and
// the environment it needs on top of the worker's; a2a's server and hooks for this run only.
export interface Headless {
  args: string[];
  env: Record<string, string>;
  edits?: FileChange[]; // files changed before the run (an agent that reads some settings from files only); one in the work tree is kept out of the worker's commits
}

export interface Agent {
  id: string; // `a2a setup ID`, `a2a hook --agent ID`
  title: string; // "Codex CLI"
  bin: string; // its command on PATH
  npm: string; // its npm package, for install hints and version lookups
  mcpClient: RegExp; // the name its MCP client gives in the handshake (a peer's `client`)
  setup(o: SetupOptions): FileChange[];
  doctor(d: DoctorContext): Promise<Check[]>;
  hook?: HookFormat; // absent: the agent runs no command hooks (its mail comes another way)
  done(o: SetupOptions): string; // the line after a setup that changed something
  headless?(o: HeadlessOptions): Headless; // a crew worker's one-task run
}
