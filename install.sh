#!/usr/bin/env bash
# Installs a2a from this checkout: Bun (when absent), dependencies, the compiled binary, and
# the binary on your PATH. Re-running it is safe.
#   ./install.sh                 -> ~/.local/bin/a2a
#   PREFIX=/usr/local ./install.sh -> /usr/local/bin/a2a
set -euo pipefail
cd "$(dirname "$0")"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

bun_works() { command -v bun >/dev/null 2>&1 && bun --version >/dev/null 2>&1; }

if ! bun_works; then
  command -v npm >/dev/null 2>&1 || die "Bun is not installed and npm is not there to install it: install Bun (https://bun.sh) or Node.js, then re-run"
  say "installing Bun with npm (npm install -g --allow-scripts=bun bun)"
  # --allow-scripts lets Bun's postinstall fetch the real binary; without it `bun` is a stub.
  npm install -g --allow-scripts=bun bun >/dev/null || die "npm could not install Bun: see the npm output above, or install Bun by hand"
  hash -r
  bun_works || die "bun was installed but does not run: check that $(npm prefix -g)/bin is on PATH"
fi
say "using bun $(bun --version)"

bun install --frozen-lockfile >/dev/null || die "bun install failed: see its output (run 'bun install' to see it)"
bun run build >/dev/null || die "the build failed: run 'bun run build' to see why"

prefix="${PREFIX:-$HOME/.local}"
bindir="$prefix/bin"
mkdir -p "$bindir" || die "cannot create $bindir: set PREFIX to a directory you can write"
# Copy then rename, so a running a2a is never replaced by a half-written file.
cp dist/a2a "$bindir/.a2a.new" && mv -f "$bindir/.a2a.new" "$bindir/a2a" || die "cannot write $bindir/a2a: set PREFIX to a directory you can write"
say "installed $bindir/a2a ($("$bindir/a2a" --version))"

case ":$PATH:" in
  *":$bindir:"*) ;;
  *) say "$bindir is not on your PATH; add it with:"
     say "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.bashrc && export PATH=\"$bindir:\$PATH\"" ;;
esac
say "next: bun test   (runs the test suite against dist/a2a)"
