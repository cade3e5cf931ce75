// `a2a completion bash|zsh|fish`: a completion script for the shell, generated from the
// commands as they are registered (names, summaries, options), so it cannot drift from the
// CLI. Slot names come from `a2a status --json` at completion time, where a slot is wanted.

import { Command } from "commander";
import { A2AError } from "../../lib/core/errors";
import { commandSpecs, type CommandSpec } from "../help";
import { out } from "../io";
import { action, command, type Ctx } from "../run";
import { registerAll } from "./index";

type Spec = CommandSpec;

// Commands whose first argument is a slot name.
const SLOT_COMMANDS = ["publish", "wait", "append", "tail", "status", "clear", "watch"];

async function specs(): Promise<CommandSpec[]> {
  const program = new Command();
  await registerAll(program);
  return commandSpecs(program);
}

const q = (s: string) => "'" + s.replace(/'/g, "'\\''") + "'";

function bash(list: Spec[]): string {
  const cases = list.map((s) => `    ${s.name}) opts=${q(s.options.join(" "))} ;;`).join("\n");
  return `# a2a completion for bash: source it, or put it in ~/.local/share/bash-completion/completions/a2a
_a2a() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd="" i opts=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      --dir) ((i++)) ;;
      -*) ;;
      *) cmd=\${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W ${q(list.map((s) => s.name).join(" ") + " help --dir --help --version")} -- "$cur"))
    return
  fi
  case $cmd in
${cases}
    help) COMPREPLY=($(compgen -W ${q(list.map((s) => s.name).join(" "))} -- "$cur")); return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ " ${SLOT_COMMANDS.join(" ")} " == *" $cmd "* ]]; then
    COMPREPLY=($(compgen -W "$(a2a status --json 2>/dev/null | tr ',' '\\n' | sed -n 's/^.*"name":"\\([^"]*\\)".*$/\\1/p')" -- "$cur"))
  fi
}
complete -o default -F _a2a a2a
`;
}

function zsh(list: Spec[]): string {
  const cmds = list.map((s) => `    ${q(s.name + ":" + s.summary.replace(/:/g, "\\:"))}`).join("\n");
  const cases = list.map((s) => `    (${s.name}) opts=(${s.options.map(q).join(" ")}) ;;`).join("\n");
  return `#compdef a2a
# a2a completion for zsh: put it on your $fpath as _a2a (e.g. ~/.local/share/zsh/site-functions/_a2a)
_a2a() {
  local -a cmds opts slots
  cmds=(
${cmds}
  )
  if (( CURRENT == 2 )); then
    _describe 'a2a command' cmds
    return
  fi
  case $words[2] in
${cases}
  esac
  if [[ $PREFIX == -* ]]; then
    compadd -a opts
  elif [[ " ${SLOT_COMMANDS.join(" ")} " == *" $words[2] "* ]]; then
    slots=(\${(f)"$(a2a status --json 2>/dev/null | tr ',' '\\n' | sed -n 's/^.*"name":"\\([^"]*\\)".*$/\\1/p')"})
    compadd -a slots
  else
    _files
  fi
}
compdef _a2a a2a 2>/dev/null || _a2a "$@"
`;
}

function fish(list: Spec[]): string {
  const lines = ["# a2a completion for fish: put it in ~/.config/fish/completions/a2a.fish", "complete -c a2a -f"];
  for (const s of list) lines.push(`complete -c a2a -n __fish_use_subcommand -a ${s.name} -d ${q(s.summary)}`);
  for (const s of list) {
    for (const o of s.options) {
      const flag = o.startsWith("--") ? `-l ${o.slice(2)}` : `-s ${o.slice(1)}`;
      lines.push(`complete -c a2a -n '__fish_seen_subcommand_from ${s.name}' ${flag}`);
    }
  }
  lines.push(`complete -c a2a -n '__fish_seen_subcommand_from ${SLOT_COMMANDS.join(" ")}' -a "(a2a status --json 2>/dev/null | string match -ra '\\"name\\":\\"[^\\"]*\\"' | string replace -r '\\"name\\":\\"([^\\"]*)\\"' '\\$1')"`);
  return lines.join("\n") + "\n";
}

const SHELLS = { bash, zsh, fish } as const;

export const commands = {
  completion: (p: Command) =>
    command(p, "completion", {
      summary: "print a shell completion script (bash, zsh or fish)",
      description: "Print a completion script for SHELL: commands with their summaries, each command's options, and slot names where a slot is wanted (read from `a2a status` as you type). install.sh installs it where your shell finds it; by hand: `a2a completion bash > ~/.local/share/bash-completion/completions/a2a`, `a2a completion zsh > ~/.local/share/zsh/site-functions/_a2a` (with that directory on $fpath), `a2a completion fish > ~/.config/fish/completions/a2a.fish`.",
      examples: ["source <(a2a completion bash)", "a2a completion zsh > ~/.local/share/zsh/site-functions/_a2a", "a2a completion fish > ~/.config/fish/completions/a2a.fish"],
      json: 'print {"shell", "script"} as JSON',
    })
      .argument("<shell>", "bash, zsh or fish")
      .action(action(async (c: Ctx, shell: string) => {
        if (!Object.hasOwn(SHELLS, shell)) throw new A2AError("EUSAGE", `no completion for shell ${JSON.stringify(shell)}: use bash, zsh or fish`);
        const script = SHELLS[shell as keyof typeof SHELLS](await specs());
        out(c.json ? JSON.stringify({ shell, script }) + "\n" : script);
      })),
};
