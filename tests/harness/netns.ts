// Two "machines" on one: a server namespace and a client namespace joined by a veth pair, and
// a link the test takes down and up (a partition). For the PostgreSQL fault tests: the server
// runs in one (tests/harness/pg.ts serverIn), a2a in the other (spawnA2A's `prefix`).
//
// Invariants:
// - names are unique per call (a random tag), so runs and helpers never collide;
// - addresses (10.213.X.1 and .2, a /30) exist only inside those two namespaces: nothing of the
//   host's own network is touched;
// - the namespaces are removed by remove(), and however this process ends besides, by a
//   lifeline as tests/harness/pg.ts has one: a shell that waits for this process's end of a
//   pipe to close, then deletes them. A namespace's last process leaving frees it.
import type { Subprocess } from "bun";

export interface Host {
  ns: string;
  address: string;
  prefix: string[]; // runs a command in the namespace: [...prefix, cmd, ...args]
}

export interface TwoHosts {
  server: Host;
  client: Host;
  down(): void; // the server's end of the link goes down: the client's packets go nowhere, silently
  up(): void;
  remove(): Promise<void>;
}

// Why two namespaces cannot be had here, or undefined. Synchronous, for describe.skipIf.
export function netnsSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return "network namespaces need root";
  if (!Bun.which("ip")) return "no ip command (install iproute2)";
  const probe = `a2a-probe-${process.pid}`;
  const made = Bun.spawnSync(["ip", "netns", "add", probe], { stderr: "pipe" });
  if (made.exitCode !== 0) return `ip netns add failed: ${made.stderr.toString().trim()}`;
  Bun.spawnSync(["ip", "netns", "del", probe]);
  return undefined;
}

function sh(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
}

export function twoHosts(): TwoHosts {
  const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  const subnet = `10.213.${1 + Math.floor(Math.random() * 254)}`;
  const mk = (role: "s" | "c", n: number): Host & { dev: string } => {
    const ns = `a2a-${role}-${tag}`;
    return { ns, dev: `a2${role}${tag}`, address: `${subnet}.${n}`, prefix: ["ip", "netns", "exec", ns] };
  };
  const server = mk("s", 1);
  const client = mk("c", 2);
  const lifeline = holdLifeline([server.ns, client.ns]);
  const remove = async () => {
    lifeline.stdin.end();
    await lifeline.exited;
  };
  try {
    for (const h of [server, client]) sh(["ip", "netns", "add", h.ns]);
    sh(["ip", "link", "add", server.dev, "netns", server.ns, "type", "veth", "peer", "name", client.dev, "netns", client.ns]);
    for (const h of [server, client]) {
      sh(["ip", "-n", h.ns, "addr", "add", `${h.address}/30`, "dev", h.dev]);
      sh(["ip", "-n", h.ns, "link", "set", "lo", "up"]);
      sh(["ip", "-n", h.ns, "link", "set", h.dev, "up"]);
    }
  } catch (err) {
    void remove();
    throw err;
  }
  return {
    server: { ns: server.ns, address: server.address, prefix: server.prefix },
    client: { ns: client.ns, address: client.address, prefix: client.prefix },
    down: () => sh(["ip", "-n", server.ns, "link", "set", server.dev, "down"]),
    up: () => sh(["ip", "-n", server.ns, "link", "set", server.dev, "up"]),
    remove,
  };
}

// The most times a TCP segment from `from` to `to` has been sent again without being
// acknowledged, over `from`'s connections (ss -ti: "backoff:N"): while the link is down, how
// long what was sent has been lost in it (the retransmission timeout doubles each time).
export function retransmissions(from: Host, to: Host): number {
  const r = Bun.spawnSync([...from.prefix, "ss", "-tin", "dst", to.address], { stdout: "pipe", stderr: "pipe" });
  return Math.max(0, ...[...r.stdout.toString().matchAll(/\bbackoff:(\d+)/g)].map((m) => Number(m[1])));
}

// Deletes the namespaces when this process's end of its stdin closes (see the header).
function holdLifeline(names: string[]): Subprocess<"pipe", "ignore", "ignore"> {
  const script = `trap '' INT HUP TERM; cat >/dev/null; for n in "$@"; do ip netns del "$n" 2>/dev/null; done`;
  const p = Bun.spawn(["sh", "-c", script, "sh", ...names], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  p.unref();
  return p;
}
