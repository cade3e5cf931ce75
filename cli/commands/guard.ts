// `a2a guard`: git hooks that refuse a commit or a push touching files another agent reserved
// (install, uninstall: lib/guard/install.ts), and what those hooks run (pre-commit, pre-push:
// lib/guard/check.ts).
//
// Invariants:
// - pre-commit / pre-merge-commit / pre-push exit 0 (go ahead) or 1 (refused: one line per blocked path naming
//   the holder, their pattern, reason and expiry, then how to bypass); when the check itself
//   cannot be made (no store, a2a or git failing) they say so in one line on stderr and exit 0:
//   the guard is advisory and must never block every commit;
// - install / uninstall change only the two hook files (and the hooks they chain).

import { realpathSync } from "node:fs";
import type { Command } from "commander";
import { A2AError, asA2AError, phrase } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import type { GuardVerdict } from "../../lib/guard/check";
import { installGuard, uninstallGuard, type GuardInstall, type HookChange } from "../../lib/guard/install";
import { inertLine } from "../inert";
import { err, json, out, readStdin } from "../io";
import { SHELL } from "../phrase";
import { action, command, type Ctx } from "../run";

const SAID: Record<HookChange["did"], string> = {
  installed: "installed",
  chained: "installed, running the hook that was there first, now",
  unchanged: "already installed: unchanged",
  updated: "updated to run this a2a",
  removed: "removed",
  restored: "removed; the hook it ran put back at",
  absent: "not installed: nothing to remove",
  foreign: "not a2a's: left alone",
};

function report(c: Ctx, r: GuardInstall): void {
  const line = (h: HookChange) => {
    if (h.did === "chained") return `${h.hook}: ${SAID.chained} ${h.chained}`;
    if (h.did === "restored") return `${h.hook}: ${SAID.restored} ${h.path}`;
    return `${h.hook}: ${SAID[h.did]} (${h.path})`;
  };
  c.confirm(r, r.hooks.map(line).join("\n"));
}

const MAX_PUSH_INPUT = 16 * 1024 * 1024;

// The refusal, one line per blocked path, then the bypass.
// A line per blocked path; the refusal itself is the error that ends the command (exit 1).
function blockedLines(v: GuardVerdict): string {
  return v.blocked.map(({ path, by }) => {
    const reason = by.reason ? `, reason ${inertLine(JSON.stringify(by.reason))}` : "";
    return `a2a guard: ${inertLine(path)} is reserved by ${inertLine(by.holder)} (pattern ${inertLine(by.pattern)}${reason}) until ${isoTime(by.expires_at)}\n`;
  }).join("");
}

type What = "commit" | "merge" | "push";

const refusal = (v: GuardVerdict, what: What) =>
  new A2AError("EDENIED", `${what} refused for ${v.as ?? "you"}: reservations are advisory; ask the holder to release (a2a reservations shows them), or bypass with git ${what} --no-verify`, {
    data: { blocked: v.blocked.map(({ path, by }) => ({ path, holder: by.holder, pattern: by.pattern })) },
  });

// Runs a hook's check; refused -> exit 1; could not check -> a warning, exit 0.
async function hookCheck(c: Ctx, what: What, check: () => Promise<GuardVerdict>): Promise<void> {
  let v: GuardVerdict;
  try {
    v = await check();
  } catch (e) {
    err(`a2a guard: could not check the ${what} against reservations (${phrase(asA2AError(e), SHELL)}): ${what} not checked\n`);
    return;
  }
  if (c.json) out(json(v));
  if (!v.blocked.length) return;
  err(blockedLines(v));
  throw refusal(v, what);
}

const binary = () => {
  try {
    return realpathSync(process.execPath);
  } catch {
    return process.execPath;
  }
};

function guardCommands(g: Command): void {
  command(g, "install", {
    summary: "add the pre-commit, pre-merge-commit and pre-push hooks to this repository",
    description:
      "Install a2a's git pre-commit, pre-merge-commit and pre-push hooks in the repository of the current directory (or --repo DIR): in its hooks directory (core.hooksPath when set, else the common git directory's, so every worktree of the repository has them). A hook already there is kept: it is moved to hooks/NAME.a2a-chained and runs first; when it refuses, so does the commit. The hooks refuse a commit (or a push) that touches a path another agent holds exclusively (a2a reserve), naming the holder; they run this a2a binary (else a2a on PATH) with the store A2A_DIR names when git runs them (else ~/.a2a). Installing again changes nothing; a2a guard uninstall puts back what was there.",
    examples: ["a2a guard install", "a2a guard install --repo ~/src/project"],
    json: "print {hooksDir, hooks: [{hook, path, did, chained?}]}",
    quiet: true,
  })
    .option("--repo <dir>", "a directory of the repository (default: the current one)")
    .action(action(async (c: Ctx, o: { repo?: string }) => report(c, installGuard(o.repo ?? process.cwd(), binary()))));

  command(g, "uninstall", {
    summary: "remove the hooks, putting back the ones they chained",
    description: "Remove a2a's pre-commit, pre-merge-commit and pre-push hooks from the repository of the current directory (or --repo DIR) and put back, byte for byte, the hooks they chained. A hook that is not a2a's is left alone.",
    examples: ["a2a guard uninstall"],
    json: "print {hooksDir, hooks: [{hook, path, did, chained?}]}",
    quiet: true,
  })
    .option("--repo <dir>", "a directory of the repository (default: the current one)")
    .action(action(async (c: Ctx, o: { repo?: string }) => report(c, uninstallGuard(o.repo ?? process.cwd()))));

  command(g, "pre-commit", {
    summary: "what the pre-commit hook runs: check the staged paths",
    description:
      "Check the paths staged for the next commit (renames: both paths) against the repository's reservations, as $A2A_AGENT, else this session's name (a2a whoami). A path another agent holds exclusively: one line per path on stderr naming the holder, their pattern, reason and expiry, and exit 1 (git refuses the commit). Your own and free paths: exit 0, silent. When the check cannot be made (the store cannot be opened, git fails), one warning line and exit 0: reservations are advisory, and git commit --no-verify skips the hook anyway.",
    examples: ["a2a guard pre-commit   # in .git/hooks/pre-commit (a2a guard install writes it)"],
    json: "also print the verdict: {as, top, checked, blocked: [{path, by}]}",
  }).action(action(async (c: Ctx) => hookCheck(c, "commit", () => c.bus.guard.commit({ cwd: process.cwd() }))));

  command(g, "pre-merge-commit", {
    summary: "what the pre-merge-commit hook runs: check the paths a merge brings",
    description:
      "Check the paths staged for the commit git merge is about to make (everything the merge brings into the branch) against the repository's reservations, as pre-commit does. Exit 1 when refused (git merge stops; the merged result stays staged), else 0; a check that cannot be made warns and exits 0. git merge --no-verify skips it.",
    examples: ["a2a guard pre-merge-commit   # in .git/hooks/pre-merge-commit (a2a guard install writes it)"],
    json: "also print the verdict: {as, top, checked, blocked: [{path, by}]}",
  }).action(action(async (c: Ctx) => hookCheck(c, "merge", () => c.bus.guard.commit({ cwd: process.cwd() }))));

  command(g, "pre-push", {
    summary: "what the pre-push hook runs: check the paths of the commits pushed",
    description:
      "Check the paths changed by the commits a push sends (git's pre-push lines on stdin: local ref, local sha, remote ref, remote sha) against the repository's reservations, as pre-commit does. The commits sent are those reachable from each new tip that the remote does not have as far as this repository knows: not from the remote's old tip nor from any of REMOTE's remote-tracking branches (so a new branch counts from its merge base with what the remote has). Exit 1 when refused, else 0; a check that cannot be made warns and exits 0.",
    examples: ["a2a guard pre-push origin git@example.com:team/repo.git < refs   # in .git/hooks/pre-push"],
    json: "also print the verdict: {as, top, checked, blocked: [{path, by}]}",
  })
    .argument("[remote]", "the remote's name (or URL), as git passes it")
    .argument("[url]", "the remote's URL, as git passes it")
    .action(action(async (c: Ctx, remote: string | undefined) =>
      hookCheck(c, "push", async () => c.bus.guard.push({ cwd: process.cwd(), remote: remote ?? "", input: process.stdin.isTTY ? "" : readStdin(MAX_PUSH_INPUT, "the pre-push lines") })),
    ));
}

export const commands = {
  guard: (p: Command) => {
    const g = command(p, "guard", {
      summary: "git hooks refusing commits and pushes of files another agent reserved",
      description:
        "A seatbelt for reservations (a2a reserve): git pre-commit, pre-merge-commit and pre-push hooks that refuse a commit, a merge or a push touching a path another agent holds exclusively, naming the holder. Advisory: --no-verify bypasses them, and a cherry-pick, rebase or fast-forward makes commits no hook sees until they are pushed. Subcommands: install, uninstall, and pre-commit, pre-merge-commit, pre-push (what the hooks run).",
      examples: ["a2a guard install", "a2a guard uninstall"],
      json: "every subcommand takes --json",
    });
    guardCommands(g);
    return g;
  },
};
