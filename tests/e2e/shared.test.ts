// A store shared by several OS users on one machine, as a team would run it: real users and a
// real group (made here as root, removed afterwards), every command under umask 022. Checks
// that the members can work together (mail, topics, slots), that nobody can rewrite another's
// message in place or remove it, and that a sender bound to an OS user cannot be forged.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { a2a, asUser, BIN, canMakeUsers, makeUsers, ON_FILES, otherUserEnv, shellAs, type RunResult } from "../harness/run";

setDefaultTimeout(60_000);

const able = canMakeUsers;
if (!able) console.warn("shared.test.ts: skipped: it needs root with useradd, groupadd and setpriv to make real users");

let GROUP = "";
let USERS = {} as Record<"alice" | "bob" | "carol", string>;
let removeUsers = () => {};
let base = "";
let store = "";

beforeAll(() => {
  if (!able) return;
  ({ group: GROUP, users: USERS, dir: base, remove: removeUsers } = makeUsers(["alice", "bob", "carol"] as const, "a2at"));
  store = join(base, "team");
});

afterAll(() => removeUsers());

// Runs `a2a ARGS` as `user` with umask 022 (a shell's default), in the shared store.
const as = (user: string, args: string[], stdin?: string, regid = user): Promise<RunResult> =>
  a2a(args, { dir: store, stdin, prefix: asUser(user, { group: regid, initGroups: true, umask: "022" }), env: otherUserEnv });

const ok = async (user: string, args: string[], stdin?: string) => {
  const r = await as(user, args, stdin);
  if (r.code !== 0) throw new Error(`${user}: a2a ${args.join(" ")} -> exit ${r.code}: ${r.stderr}`);
  return r.stdout;
};

// OS users, groups and file modes: the file engine's.
describe.if(able && ON_FILES)("a store shared by three OS users", () => {
  test("init --shared makes the root the group's, 3770 setgid and sticky, with a shared marker", async () => {
    // The administrator makes it (sudo a2a init --shared GROUP --dir /srv/a2a): root here.
    const init = Bun.spawnSync([BIN, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: store }, stdout: "pipe", stderr: "pipe" });
    expect(init.stderr.toString()).toBe("");
    expect(init.stdout.toString()).toContain(`made the shared store of group ${GROUP}`);
    const st = statSync(store);
    expect(st.mode & 0o7777).toBe(0o3770);
    expect(st.gid).not.toBe(0);
    expect(JSON.parse(await ok(USERS.bob, ["init", "--json"]))).toMatchObject({ created: false, mode: "shared", group: GROUP });
  });

  test("mail between members: the reader sees the sender's OS user; files are 0640 in the group", async () => {
    // Each reads its inbox once before mail arrives: it makes its own, sticky inbox.
    expect(await ok(USERS.bob, ["recv", "--as", "bob", "--json"])).toBe("");
    expect(await ok(USERS.carol, ["recv", "--as", "carol", "--json"])).toBe("");
    const sent = JSON.parse(await ok(USERS.alice, ["send", "bob", "hello from alice", "--as", "alice", "--json"]));
    const file = join(store, "inbox", "bob", "new", `${sent.id}.json`);
    const st = statSync(file);
    expect(st.mode & 0o777).toBe(0o640);
    expect(statSync(join(store, "inbox", "bob", "new")).mode & 0o7777).toBe(0o3770);
    const got = JSON.parse(await ok(USERS.bob, ["recv", "--as", "bob", "--json"]));
    expect(got).toMatchObject({ from: "alice", user: USERS.alice, body: "hello from alice" });
    expect(await ok(USERS.bob, ["send", "alice", "hi back", "--as", "bob"])).toMatch(/^sent /);
    expect(JSON.parse(await ok(USERS.alice, ["recv", "--as", "alice", "--json"]))).toMatchObject({ from: "bob", user: USERS.bob });
  });

  test("blobs between members: read-only in the group (0440), a member's own copy of bytes another member stored first, gc by its owner removes one nothing names", async () => {
    const dir = mkdtempSync(join(tmpdir(), "a2a-shared-blob-"));
    try {
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, "report.txt"), "alice's report\n", { mode: 0o644 });
      writeFileSync(join(dir, "loose.txt"), "nobody names this\n", { mode: 0o644 });
      const sent = JSON.parse(await ok(USERS.alice, ["send", "reviewer", "the report", "--attach", join(dir, "report.txt"), "--as", "alice", "--json"]));
      const digest = sent.attachments[0].digest;
      const blob = join(store, "blobs", "sha256", digest.slice("sha256:".length));
      expect(statSync(blob).mode & 0o777).toBe(0o440);
      expect(await ok(USERS.bob, ["get", digest])).toBe("alice's report\n");
      // Bob stores the same bytes: alice's file stays as it is, and bob keeps a copy of his own
      // beside it (what he names never hangs on a file alice may remove), once.
      expect(JSON.parse(await ok(USERS.bob, ["put", join(dir, "report.txt"), "--json"]))).toMatchObject({ digest, fresh: true });
      expect(JSON.parse(await ok(USERS.bob, ["put", join(dir, "report.txt"), "--json"]))).toMatchObject({ digest, fresh: false });
      const bobs = `${blob}.${Number(Bun.spawnSync(["id", "-u", USERS.bob]).stdout.toString().trim())}`;
      expect([statSync(bobs).mode & 0o777, readFileSync(bobs, "utf8"), readFileSync(blob, "utf8")]).toEqual([0o440, "alice's report\n", "alice's report\n"]);
      expect(shellAs(USERS.bob, `printf forged > '${blob}'`)).not.toBe(0);
      const loose = (await ok(USERS.carol, ["put", join(dir, "loose.txt")])).trim();
      // Two hours on by the gc's clock: bob's gc leaves carol's blob (blobs/sha256/ is sticky), hers removes it.
      const gcLater = async (user: string) => {
        const r = await a2a(["gc", "--json"], { dir: store, prefix: [...asUser(user, { initGroups: true, umask: "022" }), "faketime", "-f", "+2h"], env: otherUserEnv });
        if (r.code !== 0) throw new Error(`${user}: a2a gc -> exit ${r.code}: ${r.stderr}`);
        return JSON.parse(r.stdout).blobs_removed;
      };
      expect(await gcLater(USERS.bob)).toBe(0);
      expect(await gcLater(USERS.carol)).toBe(1);
      expect((await as(USERS.alice, ["get", loose])).code).toBe(3);
      expect(await ok(USERS.carol, ["get", digest])).toBe("alice's report\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("topics and slots between members", async () => {
    await ok(USERS.bob, ["pub", "team.news", "bob's news", "--as", "bob"]);
    const sub = await ok(USERS.alice, ["sub", "team.news", "--from-start", "--json"]);
    expect(JSON.parse(sub.trim())).toMatchObject({ from: "bob", body: "bob's news" });
    await ok(USERS.alice, ["publish", "report", "v1 by alice"]);
    expect(await ok(USERS.carol, ["wait", "report"])).toBe("v1 by alice");
    await ok(USERS.carol, ["publish", "report", "v2 by carol", "--if-version", "1"]);
    expect(await ok(USERS.bob, ["wait", "report", "--after-version", "1"])).toBe("v2 by carol");
  });

  test("no member can rewrite another's message in place, or remove another's topic message", async () => {
    const sent = JSON.parse(await ok(USERS.alice, ["send", "carol", "original text", "--as", "alice", "--json"]));
    const file = join(store, "inbox", "carol", "new", `${sent.id}.json`);
    expect(shellAs(USERS.bob, `printf forged > '${file}'`)).not.toBe(0);
    const topicDir = join(store, "topics", "team.news");
    const [first] = readdirSync(topicDir);
    expect(shellAs(USERS.alice, `rm -f '${join(topicDir, first)}'`)).not.toBe(0); // EPERM: the sticky bit
    expect(readdirSync(topicDir)).toContain(first);
    expect(JSON.parse(await ok(USERS.carol, ["recv", "--as", "carol", "--json"]))).toMatchObject({ body: "original text", user: USERS.alice });
  });

  test("a sender bound to an OS user cannot be forged by another: refused at send, held if planted", async () => {
    await ok(USERS.bob, ["policy", "allowlist", "--as", "bob"]);
    const allowed = await ok(USERS.bob, ["allow", "alice", "--as", "bob"]);
    expect(allowed).toContain(`alice is bound to OS user ${USERS.alice} (the writer of its last message here)`);
    const forged = await as(USERS.carol, ["send", "bob", "transfer the money", "--as", "alice"]);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(new RegExp(`bound to OS user ${USERS.alice}, but OS user ${USERS.carol} wrote it`));
    // carol writes the file by hand instead: it is held, with the reason, never shown.
    const id = `${String(Date.now() * 1000).padStart(16, "0")}-beef-1-abcdef`;
    const rec = JSON.stringify({ a2a: 1, id, from: "alice", to: "bob", body: "planted", size: 7, sent_at: Date.now() / 1000, reply_to: null, host: "h", pid: 1 });
    expect(shellAs(USERS.carol, `printf '%s\\n' '${rec}' > '${join(store, "inbox", "bob", "new", id + ".json")}'`)).toBe(0);
    expect((await as(USERS.bob, ["recv", "--as", "bob", "--json"])).stdout).toBe("");
    const held = JSON.parse(await ok(USERS.bob, ["inbox", "--held", "--as", "bob", "--json"])).held;
    expect(held.map((m: any) => [m.body, m.held_reason])).toContainEqual(["planted", `it claims to be from alice, who is bound to OS user ${USERS.alice}, but OS user ${USERS.carol} wrote it`]);
    // The real alice still gets through.
    await ok(USERS.alice, ["send", "bob", "the real alice", "--as", "alice"]);
    expect(JSON.parse(await ok(USERS.bob, ["recv", "--as", "bob", "--json"]))).toMatchObject({ body: "the real alice", user: USERS.alice });
  });

  test("someone outside the group is refused with one clear line naming the group", async () => {
    const r = await as("nobody", ["publish", "x", "y"], undefined, "65534");
    // Issue 33: it was EACCES on store.json with "mode 2770" (the README says 3770).
    expect(r).toEqual({ code: 1, stdout: "", stderr: `a2a: the shared store ${store} belongs to group ${GROUP}, and you are not in it: ask its owner to add you (usermod -aG ${GROUP} nobody), then log in again\n` });
  });

  test("a member reading another member's inbox is told whose it is, and nothing moves", async () => {
    await ok(USERS.alice, ["send", "bob", "for bob only", "--as", "alice"]);
    const r = await as(USERS.alice, ["recv", "--as", "bob"]);
    // Issue 33: it was "claiming message ... failed (EPERM): check the permissions ...".
    expect(r).toEqual({ code: 1, stdout: "", stderr: `a2a: the inbox of bob (${join(store, "inbox", "bob")}) belongs to OS user ${USERS.bob}, not to you: only its owner reads it; read your own with --as YOUR-NAME\n` });
    expect(await ok(USERS.bob, ["recv", "--as", "bob"])).toContain("for bob only");
  });
});
