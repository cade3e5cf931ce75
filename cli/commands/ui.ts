// The dashboard command: `a2a ui` serves a live page of the store on a loopback port behind
// one-time links (cli/ui/: server, gate, hub, page assets). It prints one link, and a fresh
// one each time the last is used; --open hands the browser another, which dies within a
// minute: a browser's argv is readable by every local user (/proc), so what is on it must be
// worthless by the time they read it. The server module is loaded only when the command runs,
// so the full help listing does not pay for it.
//
// It runs until stopped: Ctrl-C (or SIGTERM/SIGHUP) ends it through the runner's one signal
// policy, exit 128+N (130 for Ctrl-C), after the server and its watches are closed.

import type { Command } from "commander";
import { A2AError } from "../../lib/core/errors";
import { ended } from "../../lib/core/outcome";
import { urlOpener } from "../../lib/core/platform";
import { err, json, out, parseCount } from "../io";
import { action, command, end, type Ctx } from "../run";

export const commands = {
  ui: (p: Command) =>
    command(p, "ui", {
      summary: "serve a live dashboard of the store in your browser (loopback, one-time links)",
      description:
        "Serve one page that shows the whole bus live: slots (with streamed output as it lands), agents with their unread and held mail, topics, a pausable timeline of events, and the task board and leases. It prints a one-time link: opening it gives that browser a session cookie and the page, and a fresh link is printed for the next browser. --open hands $BROWSER (else the platform's opener) a link of its own that works once, within a minute. Actions (clear a slot, send a message as --as NAME, retry or cancel a task, release a lease) are each confirmed on the page and do what the CLI command does; a box on each session's row writes to it as yourself (from @human, marked as your own words, past its policy; only to sessions of your own OS user or role), with or without --as; --read-only turns them off. Listens on 127.0.0.1 unless --host says otherwise (then it warns). Runs until stopped: Ctrl-C exits 130.",
      examples: ["a2a ui --as alice", "a2a ui --read-only --open", "a2a ui --port 7420 --host 127.0.0.1"],
      json: "print {url, host, port, read_only, as} as one JSON line once serving (url: a one-time link; no fresh one is printed after it is used)",
    })
      .option("--port <n>", "TCP port (default 0: any free port)", "0")
      .option("--host <address>", "address to listen on (default 127.0.0.1; anything but loopback exposes the store to the network)", "127.0.0.1")
      .option("--open", "open the page in $BROWSER, else the default browser (with a one-time link)")
      .option("--read-only", "show only: no actions")
      .option("--as <name>", "who the page sends mail as (default: $A2A_AGENT); without it, only writing as yourself is on")
      .action(action(async (c: Ctx, o) => {
        const { isHostAddress, isLoopback } = await import("../ui/gate");
        const port = parseCount(o.port, "--port");
        if (port > 65535) throw new A2AError("EUSAGE", `--port ${port} is not a TCP port: use 1-65535, or 0 for any free one`);
        const host = String(o.host);
        if (!isHostAddress(host)) throw new A2AError("EUSAGE", `--host ${JSON.stringify(host)} is not an IP address: use 127.0.0.1 (the default), ::1, or an address of this machine`);
        const as = (await c.bus.presence.optional(o.as))?.name;
        const signal = c.signal();
        const { serveUi } = await import("../ui/server");
        const ui = await serveUi(c.bus, { host, port, readOnly: !!o.readOnly, as });
        try {
          if (!isLoopback(host)) {
            err(`a2a: warning: serving on ${host}, not loopback: anyone who can reach this address and learns the URL can read the store${o.readOnly ? "" : " and act on it"}; prefer the default 127.0.0.1 (with ssh -L for remote use)\n`);
          }
          // Each printed link, once used, is followed by the next (not under --json: one line).
          const printed = (): string =>
            ui.link({
              onUsed: () => {
                if (!c.json) out(`a2a ui: that link has been used; for another browser:\n  ${printed()}\n`);
              },
            });
          out(c.json
            ? json({ url: printed(), host, port: ui.port, read_only: !!o.readOnly, as: as ?? null })
            : `a2a ui: serving ${c.bus.where}${o.readOnly ? " (read-only)" : ""}${as ? ` as ${as}` : ""}\n  ${printed()}\nCtrl-C stops it.\n`);
          if (o.open) openBrowser(ui.link({ ttlMs: OPEN_LINK_TTL_MS }), process.env.BROWSER);
          // Until Ctrl-C, or until the store refuses a read (the feed's error is this command's).
          const stopped = new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
          await Promise.race([stopped, ui.hub.done.then(() => stopped)]);
        } finally {
          await ui.stop();
        }
        end(c, ended("aborted", undefined, []), { timeout: "ok" });
      })),
};

// Long enough for a browser to start on a slow machine; the link dies at its first use anyway.
const OPEN_LINK_TTL_MS = 60_000;

// $BROWSER as xdg-open and Python read it (its first entry; "%s" marks where the URL goes),
// else the platform's opener; detached. A failure is a warning (the link is printed anyway).
function openBrowser(url: string, browser: string | undefined): void {
  const given = browser?.split(":").find((b) => b.trim() !== "")?.trim().split(/\s+/);
  const argv = given && (given.some((a) => a.includes("%s")) ? given.map((a) => a.replaceAll("%s", url)) : [...given, url]);
  const cmd = argv?.[0] ?? urlOpener();
  try {
    const p = Bun.spawn(argv ?? [cmd, url], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    p.unref();
    p.exited.then((code) => {
      if (code !== 0) err(`a2a: warning: ${cmd} could not open the page (exit ${code}): open the URL above by hand\n`);
    });
  } catch {
    err(`a2a: warning: no ${cmd} to open the page: open the URL above by hand\n`);
  }
}
