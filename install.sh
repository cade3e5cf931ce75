#!/usr/bin/env bash
# Installs a2a from this checkout: Bun (when absent), dependencies, the compiled binary, the
# binary on your PATH, and shell completion. Re-running it is safe.
#   ./install.sh                    -> ~/.local/bin/a2a
#   PREFIX=/usr/local ./install.sh  -> /usr/local/bin/a2a
#   ./install.sh --uninstall        -> removes what it installed (same PREFIX), says what it left
# It never strands you: a Bun that npm put off your PATH (npm honours PREFIX too) is used by
# its full path and linked beside a2a (for `bun test`); the build's own output is shown only if
# it fails; it ends with the version and the next two commands.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
bun_works() { "$1" --version >/dev/null 2>&1; }
# npm puts global binaries in $(npm prefix -g)/bin, and honours PREFIX: that may be off PATH.
npm_bin() { command -v npm >/dev/null 2>&1 && printf '%s/bin' "$(npm prefix -g 2>/dev/null)"; }

prefix="${PREFIX:-$HOME/.local}"
bindir="$prefix/bin"
# Where each shell looks for completions of a user (or, with PREFIX, of that prefix).
if [ -n "${PREFIX:-}" ]; then
  bash_comp="$prefix/share/bash-completion/completions/a2a"
  zsh_comp="$prefix/share/zsh/site-functions/_a2a"
  fish_comp="$prefix/share/fish/vendor_completions.d/a2a.fish"
else
  bash_comp="${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion/completions/a2a"
  zsh_comp="${XDG_DATA_HOME:-$HOME/.local/share}/zsh/site-functions/_a2a"
  fish_comp="${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions/a2a.fish"
fi

if [ "${1:-}" = "--uninstall" ]; then
  # First a2a's own entries in each coding agent's settings (its MCP server and hooks run this
  # binary: left behind, every hook would fail and the agent would show a2a failing to start).
  if [ -x "$bindir/a2a" ]; then
    for agent in claude codex gemini opencode copilot qwen; do
      if setup_out=$("$bindir/a2a" setup "$agent" --remove 2>&1); then
        printf '%s\n' "$setup_out" | grep -E '^(/|a2a removed)' | grep -v ': unchanged' | sed "s/^/install.sh: $agent: /" || true
      else
        printf '%s\n' "$setup_out" >&2
        die "could not take a2a out of $agent's settings (above), so nothing was removed: fix that, or run $bindir/a2a setup $agent --remove yourself, then re-run"
      fi
    done
  fi
  removed=0
  ours=("$bindir/a2a" "$bash_comp" "$zsh_comp" "$fish_comp")
  # The bun link install.sh made (to npm's Bun, which stays).
  if [ -L "$bindir/bun" ] && nb=$(npm_bin) && [ "$(readlink "$bindir/bun")" = "$nb/bun" ]; then ours+=("$bindir/bun"); fi
  for f in "${ours[@]}"; do
    if [ -e "$f" ] || [ -L "$f" ]; then rm -f "$f" && say "removed $f" && removed=$((removed + 1)); fi
  done
  [ "$removed" -gt 0 ] || say "nothing to remove under $prefix (set PREFIX as when you installed)"
  say "left in place: your store (${A2A_DIR:-$HOME/.a2a}: slots, mail, topics; remove it yourself if you want it gone), Bun, this checkout, and any repository's own set-up (a2a setup AGENT --scope project --remove, in that repository)"
  exit 0
fi
[ $# -eq 0 ] || die "unknown argument '$1': run ./install.sh, or ./install.sh --uninstall"

bun=""
if command -v bun >/dev/null 2>&1 && bun_works bun; then
  bun=$(command -v bun)
elif bun_works "$bindir/bun"; then
  bun="$bindir/bun" # the link an earlier run put beside a2a
elif nb=$(npm_bin) && bun_works "$nb/bun"; then
  bun="$nb/bun"; say "using the Bun npm installed earlier, in $nb (not on your PATH)"
else
  command -v npm >/dev/null 2>&1 || die "Bun is not installed and npm is not there to install it: install Bun (https://bun.sh) or Node.js, then re-run"
  say "installing Bun with npm (npm install -g --allow-scripts=bun bun)"
  log=$(mktemp)
  # --allow-scripts lets Bun's postinstall fetch the real binary; without it `bun` is a stub.
  npm install -g --allow-scripts=bun bun >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; die "npm could not install Bun (its output is above): install Bun by hand (https://bun.sh) and re-run"; }
  rm -f "$log"
  hash -r
  npm_bin=$(npm_bin)
  if command -v bun >/dev/null 2>&1 && bun_works bun; then bun=$(command -v bun)
  elif bun_works "$npm_bin/bun"; then bun="$npm_bin/bun"; say "Bun is in $npm_bin, which is not on your PATH: using it from there"
  else die "npm installed Bun but it does not run (looked on PATH and in $npm_bin): install Bun by hand (https://bun.sh) and re-run"
  fi
fi
say "using bun $("$bun" --version) ($bun)"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# What the binary needs, not the test suite's tools (Claude Code, a browser driver: hundreds of
# MB); `bun test` installs those itself the first time it runs (tests/preload.ts).
"$bun" install --frozen-lockfile --production >"$log" 2>&1 || { cat "$log" >&2; die "bun install failed (its output is above): check your network, then re-run"; }
# The build script calls `bun` by name: put the Bun found above first on its PATH (`bun run`
# adds a shim of its own only when no node is on PATH, and a Bun just installed with npm may
# be off PATH).
PATH="$(dirname "$bun"):$PATH" "$bun" run --silent build >"$log" 2>&1 || { cat "$log" >&2; die "the build failed (its output is above)"; }

mkdir -p "$bindir" 2>/dev/null || die "cannot create $bindir: set PREFIX to a directory you can write"
# Copy then rename, so a running a2a is never replaced by a half-written file.
{ cp dist/a2a "$bindir/.a2a.new" && mv -f "$bindir/.a2a.new" "$bindir/a2a"; } 2>/dev/null || die "cannot write $bindir/a2a: set PREFIX to a directory you can write"
version=$("$bindir/a2a" --version) || die "$bindir/a2a does not run: see the output above"

# `bun test` (the README's next command) needs bun on PATH: a Bun found off PATH gets a link
# beside a2a, in the one directory the PATH line below adds (a re-run finds it there too).
if ! command -v bun >/dev/null 2>&1 && [ "$(dirname "$bun")" != "$bindir" ]; then
  if [ ! -e "$bindir/bun" ] || [ -L "$bindir/bun" ]; then
    ln -sfn "$bun" "$bindir/bun" 2>/dev/null && say "linked $bindir/bun to $bun (for bun test)" || say "could not link $bindir/bun to $bun: run the tests with $bun test"
  fi
fi

# Completion: bash always (bash-completion loads it from there), zsh and fish when present.
put_completion() { # shell file
  mkdir -p "$(dirname "$2")" 2>/dev/null && "$bindir/a2a" completion "$1" >"$2.new" 2>/dev/null && mv -f "$2.new" "$2" && say "$1 completion: $2$3"
}
put_completion bash "$bash_comp" " (loaded by bash-completion in new shells; or: source $bash_comp)" || say "could not write bash completion to $bash_comp (a2a completion bash prints it)"
if command -v zsh >/dev/null 2>&1; then
  put_completion zsh "$zsh_comp" " (add $(dirname "$zsh_comp") to fpath before compinit in ~/.zshrc)" || say "could not write zsh completion (a2a completion zsh prints it)"
fi
if command -v fish >/dev/null 2>&1; then
  put_completion fish "$fish_comp" "" || say "could not write fish completion (a2a completion fish prints it)"
fi

a2a="a2a"
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) a2a="$bindir/a2a"
     say "$bindir is not on your PATH; add it with:"
     # The file your shell reads (a2a doctor's fix says the same: cli/commands/doctor.ts pathLine).
     shell="${SHELL:-sh}"
     case "${shell##*/}" in
       fish) say "  fish_add_path $bindir" ;;
       zsh) say "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.zshrc && export PATH=\"$bindir:\$PATH\"" ;;
       bash) say "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.bashrc && export PATH=\"$bindir:\$PATH\"" ;;
       *) say "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.profile && export PATH=\"$bindir:\$PATH\"" ;;
     esac ;;
esac
say "installed a2a $version at $bindir/a2a"
# Does it work here? One line per check; a problem says its fix. Exit 1 is normal right after
# installing when Claude Code is there but not set up yet, so it never fails the install.
say "checking this machine (a2a doctor):"
set +o pipefail
"$bindir/a2a" doctor 2>&1 | sed 's/^/install.sh:   /'
[ "${PIPESTATUS[0]}" = 0 ] || say "a2a doctor found the problems above; each line says its fix"
set -o pipefail
say "next:"
say "  $a2a --help            # the commands, with examples"
say "  $a2a setup claude      # give Claude Code the tools and the mail hooks (claude mcp add -s user a2a -- $a2a mcp for the server alone)"
