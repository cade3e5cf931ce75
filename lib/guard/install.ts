// `a2a guard install` / `uninstall`: a2a's git pre-commit, pre-merge-commit and pre-push hooks in a repository's
// hooks directory (git.ts hooksDir: core.hooksPath, else the common git directory's, so every
// worktree of the repository gets them), each chaining the hook that was there before.
//
// Chaining: a hook already at hooks/NAME is MOVED (renamed, so its bytes, mode, owner and a
// symlink stay exactly as they were) to hooks/NAME.a2a-chained, and a2a's script takes its
// place. The script runs the chained hook first, with git's arguments and stdin, and stops with
// its status when it refuses; then it runs `a2a guard NAME`. Uninstall renames the chained hook
// back over a2a's (or removes a2a's when nothing was chained). A hook that finds its siblings
// by its own name (husky's) sees NAME.a2a-chained: for those, call `a2a guard NAME` from the
// hook itself instead.
//
// Invariants:
// - a2a's script is recognised by its MARK line, and only a regular file carrying it is ever
//   replaced or removed; anything else at hooks/NAME is the user's;
// - install twice changes nothing (the second finds its own script, byte for byte);
//   uninstall after install leaves the directory as it was (bar a hooks directory install
//   had to make);
// - all or nothing: every hook is looked at before any file is touched, and a state install
//   cannot chain safely (a NAME.a2a-chained beside a hook that is not a2a's) is refused,
//   EUSAGE, nothing changed;
// - the script runs the a2a binary that installed it (its absolute path), else `a2a` on PATH;
//   the store is whatever A2A_DIR says when git runs the hook (never written into the script:
//   a database URL may carry a password); when a2a cannot be found or fails (any status but 0
//   or 1), the script lets the commit or push through with a warning on stderr: the guard is
//   an advisory seatbelt and must never block every commit.

import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeUserFile } from "../core/user-file";
import { A2AError } from "../core/errors";
import { hooksDir } from "./git";

// pre-merge-commit: `git merge` makes its commit without running pre-commit.
export const GUARD_HOOKS = ["pre-commit", "pre-merge-commit", "pre-push"] as const;
export type GuardHook = (typeof GUARD_HOOKS)[number];
export const CHAINED = ".a2a-chained";
const MARK = "# a2a guard hook: installed by `a2a guard install`";

export type HookState = "installed" | "chained" | "unchanged" | "updated" | "removed" | "restored" | "absent" | "foreign";

export interface HookChange {
  hook: GuardHook;
  path: string;
  did: HookState;
  chained?: string; // the user's own hook, moved aside, that a2a's runs first
}

export interface GuardInstall {
  hooksDir: string;
  hooks: HookChange[];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

// The script at hooks/NAME. `$0`'s directory finds the chained hook, so a repository moved
// elsewhere keeps working.
export function hookScript(hook: GuardHook, bin: string): string {
  const what = hook === "pre-push" ? "push" : hook === "pre-merge-commit" ? "merge" : "commit";
  const chain =
    hook !== "pre-push"
      ? `if [ -x "$hooks/${hook}${CHAINED}" ]; then\n  "$hooks/${hook}${CHAINED}" "$@" || exit $?\nfi\n`
      : // git gives pre-push the refs on stdin: read once, handed to both.
        `input=$(cat)\nfeed() { [ -z "$input" ] || printf '%s\\n' "$input"; }\nif [ -x "$hooks/${hook}${CHAINED}" ]; then\n  feed | "$hooks/${hook}${CHAINED}" "$@" || exit $?\nfi\n`;
  const run = hook !== "pre-push" ? `"$a2a" guard ${hook}` : `feed | "$a2a" guard ${hook} "$@"`;
  return `#!/bin/sh
${MARK}; \`a2a guard uninstall\` puts back what was here.
# Runs the hook that was here before (${hook}${CHAINED}, if any; when it refuses, so does
# this), then refuses a ${what} touching files another agent reserved (a2a reservations).
# Advisory: \`git ${what} --no-verify\` skips it; when a2a is missing or fails, the ${what} goes
# ahead with a warning. The store is A2A_DIR's (else ~/.a2a), as when git runs this.
hooks=$(dirname -- "$0")
${chain}a2a=${q(bin)}
if [ ! -x "$a2a" ]; then
  a2a=$(command -v a2a) || { echo "a2a guard: a2a is not at "${q(bin)}" nor on PATH: ${what} not checked for reservations" >&2; exit 0; }
fi
${run}
status=$?
[ "$status" -le 1 ] && exit "$status"
echo "a2a guard: a2a failed (exit $status): ${what} not checked for reservations" >&2
exit 0
`;
}

function ioFailed(e: unknown, what: string): A2AError {
  if (e instanceof A2AError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  return new A2AError("EIO", `${what} failed (${code}): check that you may read and write the repository's hooks directory`, { cause: e, data: { errno: code } });
}

type Found = { kind: "none" } | { kind: "ours"; text: string } | { kind: "theirs" };

function look(path: string): Found {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none" };
    throw ioFailed(e, `reading ${path}`);
  }
  if (!st.isFile()) return { kind: "theirs" };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw ioFailed(e, `reading ${path}`);
  }
  return text.split("\n", 3).some((l) => l.startsWith(MARK)) ? { kind: "ours", text } : { kind: "theirs" };
}

const exists = (path: string) => look(path).kind !== "none";

function io<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw ioFailed(e, what);
  }
}

function writeScript(path: string, text: string): void {
  writeUserFile(path, text);
  io(`making ${path} executable`, () => chmodSync(path, 0o755));
}

// Installs a2a's hooks in the repository `dir` is in; `bin` is the a2a binary they run.
export function installGuard(dir: string, bin: string): GuardInstall {
  const hooks = hooksDir(dir);
  const plan = GUARD_HOOKS.map((hook) => {
    const path = join(hooks, hook);
    const chained = path + CHAINED;
    const found = look(path);
    if (found.kind !== "ours" && exists(chained)) {
      throw new A2AError("EUSAGE", `cannot install the guard: ${chained} is there already, but ${path} is not a2a's hook${found.kind === "none" ? " (it is missing)" : ""}: move ${found.kind === "none" ? chained + " back to " + path : "one of them away"}, then install again`, {
        data: { hook, path, chained },
      });
    }
    return { hook, path, chained, found, want: hookScript(hook, bin) };
  });
  io(`making ${hooks}`, () => mkdirSync(hooks, { recursive: true }));
  const out: HookChange[] = [];
  for (const p of plan) {
    const chainedNow = exists(p.chained) ? { chained: p.chained } : {};
    if (p.found.kind === "ours") {
      if (p.found.text === p.want) out.push({ hook: p.hook, path: p.path, did: "unchanged", ...chainedNow });
      else {
        writeScript(p.path, p.want); // another binary installed it: this one's path now
        out.push({ hook: p.hook, path: p.path, did: "updated", ...chainedNow });
      }
    } else if (p.found.kind === "theirs") {
      io(`moving ${p.path} to ${p.chained}`, () => renameSync(p.path, p.chained));
      writeScript(p.path, p.want);
      out.push({ hook: p.hook, path: p.path, did: "chained", chained: p.chained });
    } else {
      writeScript(p.path, p.want);
      out.push({ hook: p.hook, path: p.path, did: "installed" });
    }
  }
  return { hooksDir: hooks, hooks: out };
}

// Takes a2a's hooks out of the repository `dir` is in, putting back the hooks they chained.
export function uninstallGuard(dir: string): GuardInstall {
  const hooks = hooksDir(dir);
  const out: HookChange[] = [];
  for (const hook of GUARD_HOOKS) {
    const path = join(hooks, hook);
    const chained = path + CHAINED;
    const found = look(path);
    const hasChained = exists(chained);
    if (found.kind === "theirs") {
      out.push({ hook, path, did: "foreign", ...(hasChained ? { chained } : {}) }); // not a2a's: left alone
    } else if (hasChained) {
      io(`moving ${chained} back to ${path}`, () => renameSync(chained, path));
      out.push({ hook, path, did: "restored", chained });
    } else if (found.kind === "ours") {
      io(`removing ${path}`, () => unlinkSync(path));
      out.push({ hook, path, did: "removed" });
    } else out.push({ hook, path, did: "absent" });
  }
  return { hooksDir: hooks, hooks: out };
}
