// Two machines without a shared filesystem (issue 13): the CLI and the MCP server over ssh, as
// they are, against a real sshd on loopback. The "remote machine" is a store only the sshd
// session sees (sshd's SetEnv gives its sessions A2A_DIR=remote and a PATH with a2a); the
// "laptop" has a store of its own that nothing here shares. Checked: a handoff each way through
// the CLI, exit statuses through ssh, and an MCP session over `ssh HOST a2a mcp` whose presence
// on the remote store is right (its name, live pid, directory) and is gone when it ends.
// Needs root (sshd's privilege separation), /usr/sbin/sshd and ssh-keygen (Debian's
// openssh-server; .ci/run installs it). Without them the test says it skipped, and why.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { connect, text } from "../harness/mcp";
import { a2a, BIN, hasWatch, ON_FILES, readUntil, ROOT, spawnA2A, tempDir, until } from "../harness/run";

setDefaultTimeout(120_000);

const SSHD = "/usr/sbin/sshd";
const why =
  process.getuid?.() !== 0 ? "not root (sshd needs root for privilege separation)"
  : !existsSync(SSHD) ? `${SSHD} is missing (apt-get install openssh-server)`
  : !Bun.which("ssh") || !Bun.which("ssh-keygen") ? "ssh or ssh-keygen is missing (apt-get install openssh-client)"
  : undefined;
if (why) console.log(`ssh.test.ts: skipped: ${why}`);

const sh = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString()}`);
};

interface Remote {
  ssh: string[]; // ssh ... root@127.0.0.1, ready for a remote command
  remote: string; // the remote machine's store
  local: string; // the laptop's store
  wrapper: string; // a script running `a2a ARGS` on the remote, for the MCP client
  sshd: Subprocess<"ignore", "pipe", "pipe">;
}

async function startRemote(root: string): Promise<Remote> {
  const remote = join(root, "remote-store");
  const local = join(root, "laptop-store");
  const bin = join(root, "remote-bin");
  mkdirSync(bin);
  symlinkSync(BIN, join(bin, "a2a"));
  sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(root, "host_key")]);
  sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", join(root, "user_key")]);
  writeFileSync(join(root, "authorized_keys"), await Bun.file(join(root, "user_key.pub")).text());
  chmodSync(join(root, "authorized_keys"), 0o600);
  mkdirSync("/run/sshd", { recursive: true }); // sshd's privilege-separation directory
  for (let attempt = 0; ; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 40000);
    const config = join(root, "sshd_config");
    writeFileSync(
      config,
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${join(root, "host_key")}`,
        `PidFile ${join(root, "sshd.pid")}`,
        `AuthorizedKeysFile ${join(root, "authorized_keys")}`,
        "StrictModes no",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        `SetEnv A2A_DIR=${remote} PATH=${bin}:/usr/bin:/bin`,
        "",
      ].join("\n"),
    );
    const sshd = Bun.spawn({ cmd: [SSHD, "-D", "-e", "-f", config], stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const said = await readUntil(sshd.stderr, (t) => /Server listening|error|Bad|fatal/i.test(t), 20_000);
    if (!/Server listening/.test(said)) {
      sshd.kill();
      if (attempt < 5 && /Address already in use|bind/i.test(said)) continue;
      throw new Error(`sshd did not start: ${said}`);
    }
    const ssh = ["ssh", "-i", join(root, "user_key"), "-p", String(port), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "root@127.0.0.1"];
    const wrapper = join(root, "ssh-a2a");
    writeFileSync(wrapper, `#!/bin/sh\nexec ${ssh.map((a) => `'${a}'`).join(" ")} a2a "$@"\n`);
    chmodSync(wrapper, 0o755);
    return { ssh, remote, local, wrapper, sshd };
  }
}

// Runs a command on the laptop (its own store in A2A_DIR, which ssh does not carry over).
async function onLaptop(cmd: string[], local: string) {
  const p = Bun.spawn({ cmd, env: { ...process.env, A2A_DIR: local }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// Two machines with a store directory each: the file engine's (on a database both would reach the server).
describe.skipIf(!!why || !ON_FILES)("two machines over ssh, no shared filesystem", () => {
  test("CLI: a handoff each way; exit statuses come back through ssh", async () => {
    using d = tempDir("a2a-ssh-");
    const r = await startRemote(d.path);
    try {
      expect((await onLaptop([...r.ssh, "a2a", "--version"], r.local)).stdout).toBe("0.1.0\n");
      // Laptop -> remote: a waiter on the remote machine gets what the laptop publishes over ssh.
      const waiter = spawnA2A(["wait", "schema", "--timeout", "60s"], { dir: r.remote });
      await until(() => hasWatch(waiter.pid), 20_000, "the remote waiter's watch");
      const pub = await onLaptop([...r.ssh, "a2a", "publish", "schema", "'create table t (id int)'"], r.local);
      expect(pub).toEqual({ stdout: "published schema (version 1, 23B)\n", stderr: "", code: 0 });
      expect([await new Response(waiter.stdout).text(), await waiter.exited]).toEqual(["create table t (id int)", 0]);
      // Remote -> laptop: `ssh HOST a2a wait` blocks there and prints what the remote side publishes.
      const wait = Bun.spawn({ cmd: [...r.ssh, "a2a", "wait", "review", "--timeout", "60s"], env: { ...process.env, A2A_DIR: r.local }, stdout: "pipe", stderr: "pipe" });
      expect((await a2a(["publish", "review", "looks good"], { dir: r.remote })).code).toBe(0);
      expect([await new Response(wait.stdout).text(), await wait.exited]).toEqual(["looks good", 0]);
      // Statuses pass through ssh: 124 for a timeout, 3 for not found.
      expect((await onLaptop([...r.ssh, "a2a", "wait", "never", "--timeout", "0.2s"], r.local)).code).toBe(124);
      expect((await onLaptop([...r.ssh, "a2a", "status", "nope"], r.local)).code).toBe(3);
      // A file of 5 MiB each way over ssh's stdin/stdout: `ssh HOST a2a put -` and `a2a get`.
      const file = join(d.path, "data.bin");
      const bytes = new Uint8Array(5 * 1024 * 1024 + 3).map((_, i) => (i * 7 + (i >> 12)) & 0xff);
      writeFileSync(file, bytes);
      const digest = `sha256:${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}`;
      const put = Bun.spawn({ cmd: [...r.ssh, "a2a", "put", "-"], stdin: Bun.file(file), stdout: "pipe", stderr: "pipe" });
      expect([await new Response(put.stdout).text(), await put.exited]).toEqual([`${digest}\n`, 0]);
      const get = Bun.spawn({ cmd: [...r.ssh, "a2a", "get", digest], stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const back = new Uint8Array(await new Response(get.stdout).arrayBuffer());
      expect([await get.exited, back.length, Buffer.compare(back, bytes)]).toEqual([0, bytes.length, 0]);
      // Nothing reached the laptop's own store.
      expect((await a2a(["status", "--json"], { dir: r.local })).stdout).toBe("[]\n");
    } finally {
      r.sshd.kill();
      await r.sshd.exited;
    }
  });

  // The README's own lines (section "Two machines over ssh"), run by bash on the laptop with
  // `ssh devbox` reaching the sshd here: SQL with quotes, $, ; and newlines goes over stdin
  // byte for byte (issue 33: "$(cat schema.sql)" was parsed again by the remote shell).
  test("the README's ssh lines, as written: a schema file over stdin, byte for byte, and the wait's result back", async () => {
    using d = tempDir("a2a-ssh-");
    const r = await startRemote(d.path);
    try {
      const readme = readFileSync(join(ROOT, "README.md"), "utf8");
      const section = readme.slice(readme.indexOf("## Two machines over ssh"));
      const block = /```sh\n([\s\S]*?)```/.exec(section)![1];
      const lines = block.split("\n").filter((l) => l.startsWith("ssh devbox") || l.startsWith("summary=$(ssh devbox"));
      expect(lines).toEqual(["ssh devbox a2a publish schema - < schema.sql", "summary=$(ssh devbox a2a wait review --timeout 30m)"]);
      // `ssh` on the laptop's PATH: the real one with the key, port and options, devbox its host.
      const bin = join(d.path, "laptop-bin");
      mkdirSync(bin);
      const [, ...opts] = r.ssh.slice(0, -1);
      writeFileSync(join(bin, "ssh"), `#!/bin/sh\n[ "$1" = devbox ] || exit 97\nshift\nexec /usr/bin/ssh ${opts.map((o) => `'${o}'`).join(" ")} root@127.0.0.1 "$@"\n`);
      chmodSync(join(bin, "ssh"), 0o755);
      const sql = "create table \"user\" (id int, note text default 'it''s $HOME; `x`');\n-- a comment; (parens) & * ?\n";
      writeFileSync(join(d.path, "schema.sql"), sql);
      const script = `set -eu\n${lines.join("\n")}\nprintf '%s' "$summary"\n`;
      const sh = Bun.spawn({ cmd: ["bash", "-c", script], cwd: d.path, env: { ...process.env, PATH: `${bin}:/usr/bin:/bin`, A2A_DIR: r.local }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      await until(() => existsSync(join(r.remote, "slots", "schema.json")), 30_000, "the schema on devbox");
      expect(await a2a(["wait", "schema"], { dir: r.remote })).toEqual({ code: 0, stdout: sql, stderr: "" });
      expect((await a2a(["publish", "review", "schema ok"], { dir: r.remote })).code).toBe(0);
      const [stdout, stderr, code] = await Promise.all([new Response(sh.stdout).text(), new Response(sh.stderr).text(), sh.exited]);
      expect({ stdout, stderr, code }).toEqual({ stdout: "published schema (version 1, " + Buffer.byteLength(sql) + "B)\nschema ok", stderr: "", code: 0 });
    } finally {
      r.sshd.kill();
      await r.sshd.exited;
    }
  });

  // Issue 33: Ctrl-C on `ssh devbox a2a wait NAME` left the remote wait running until the slot
  // was published. ssh gone, sshd closes the remote command's stdout: the wait ends by itself.
  test("Ctrl-C on the laptop's `ssh devbox a2a wait NAME` ends the remote wait", async () => {
    using d = tempDir("a2a-ssh-");
    const r = await startRemote(d.path);
    try {
      const name = `never-${process.pid}-${Date.now()}`;
      const ssh = Bun.spawn({ cmd: [...r.ssh, "a2a", "wait", name], env: { ...process.env, A2A_DIR: r.local }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      // The remote a2a: the process whose command line names this slot, once it watches the store.
      const remotePid = (): number | undefined => {
        for (const p of readdirSync("/proc").filter((e) => /^\d+$/.test(e)).map(Number)) {
          if (p === ssh.pid) continue;
          try {
            const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
            if (argv.includes(name) && argv.includes("wait") && !argv.some((a) => a.includes("ssh"))) return p;
          } catch {
            // gone meanwhile
          }
        }
        return undefined;
      };
      let pid: number | undefined;
      await until(() => (pid = remotePid()) !== undefined && hasWatch(pid), 30_000, "the remote wait armed");
      ssh.kill("SIGINT");
      await ssh.exited;
      await until(() => !existsSync(`/proc/${pid}/cmdline`) || readFileSync(`/proc/${pid}/cmdline`, "utf8") === "", 30_000, "the remote wait to end");
      expect(JSON.parse((await a2a(["status", "--json"], { dir: r.remote })).stdout)).toEqual([]);
    } finally {
      r.sshd.kill();
      await r.sshd.exited;
    }
  });

  test("MCP over `ssh HOST a2a mcp`: tools work both ways, the session is a live peer there, gone when it ends", async () => {
    using d = tempDir("a2a-ssh-");
    const r = await startRemote(d.path);
    try {
      const s = await connect(r.local, { A2A_AGENT: "" }, { bin: r.wrapper, stderr: "pipe" });
      try {
        const me = await s.json("whoami");
        // The name the remote server derived: ssh starts it in the remote home directory.
        const peers = JSON.parse((await a2a(["peers", "--json"], { dir: r.remote })).stdout).peers;
        expect(peers).toHaveLength(1);
        const peer = peers[0];
        expect(peer).toMatchObject({ name: me.name, host: hostname(), cwd: process.env.HOME ?? "/root" });
        expect(existsSync(`/proc/${peer.pid}`)).toBe(true);
        expect(peer.pid).not.toBe(s.pid); // the remote a2a, not the local ssh client
        // Laptop's model -> remote shell, and back.
        expect((await s.json("agent_publish", { name: "plan", result: "step 1" })).version).toBe(1);
        expect((await a2a(["wait", "plan"], { dir: r.remote })).stdout).toBe("step 1");
        expect((await a2a(["send", me.name, "from the devbox", "--as", "devbox"], { dir: r.remote })).code).toBe(0);
        const msgs = await s.call("check_messages");
        expect(msgs.isError).toBeFalsy();
        expect(text(msgs)).toContain("from the devbox");
        expect(text(msgs)).toContain("from devbox");
      } finally {
        await s.close();
      }
      // ssh closed the remote server's stdin: it removed its presence.
      await until(() => JSON.parse(Bun.spawnSync([BIN, "peers", "--json"], { env: { ...process.env, A2A_DIR: r.remote } }).stdout.toString()).peers.length === 0, 30_000, "the remote peer to go");
    } finally {
      r.sshd.kill();
      await r.sshd.exited;
    }
  });
});
