// A store shared by several OS users, one of them hostile (mallory): real users and a real
// group (made here as root, removed afterwards), every command the compiled binary under umask
// 022. What a member can do with plain shell commands to the others' files must not lose,
// hide or misattribute anyone's mail, policy, topic messages or session state; what a2a cannot
// stop or fix itself, `a2a doctor` names with its fix.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "../harness/mcp";
import { a2a, asUser, BIN, canMakeUsers, makeUsers, ON_FILES, otherUserEnv, shellAs, type RunResult } from "../harness/run";

setDefaultTimeout(60_000);

const able = canMakeUsers;
if (!able) console.warn("shared-hostile.test.ts: skipped: it needs root with useradd, groupadd and setpriv to make real users");

let GROUP = "";
let USERS = {} as Record<"alice" | "bob" | "carol" | "mallory", string>;
let removeUsers = () => {};
let base = "";
let store = "";

beforeAll(() => {
  if (!able) return;
  ({ group: GROUP, users: USERS, dir: base, remove: removeUsers } = makeUsers(["alice", "bob", "carol", "mallory"] as const, "a2ah"));
  store = join(base, "team");
});

afterAll(() => removeUsers());

// `a2a ARGS` as `user` (umask 022) in the store `dir`.
const as = (user: string, args: string[], o: { stdin?: string; env?: Record<string, string>; dir?: string } = {}): Promise<RunResult> =>
  a2a(args, { dir: o.dir ?? store, stdin: o.stdin, prefix: asUser(user, { initGroups: true, umask: "022" }), env: { ...otherUserEnv, ...o.env } });

const ok = async (user: string, args: string[], o: { stdin?: string; env?: Record<string, string>; dir?: string } = {}) => {
  const r = await as(user, args, o);
  if (r.code !== 0) throw new Error(`${user}: a2a ${args.join(" ")} -> exit ${r.code}: ${r.stderr}`);
  return r.stdout;
};


const mode = (p: string) => statSync(p).mode & 0o7777;
const doctor = async (user: string, env: Record<string, string> = {}, dir = store) => JSON.parse((await as(user, ["doctor", "--json"], { env, dir })).stdout) as { checks: { check: string; level: string; detail: string; fix?: string }[] };
const ownerLines = (d: Awaited<ReturnType<typeof doctor>>) => d.checks.filter((c) => c.check === "owners");
// A message written by hand: what a sender's a2a writes, with the id (its clock) chosen.
const messageFile = (id: string, from: string, to: string, body: string) =>
  JSON.stringify({ a2a: 1, id, from, to, body, size: Buffer.byteLength(body), sent_at: Date.now() / 1000, reply_to: null, host: "h", pid: 1 });
const idAt = (ms: number, tail: string) => `${String(ms * 1000).padStart(16, "0")}-beef-1-${tail}`;
const hook = (user: string, agent: string) => as(user, ["hook", "user-prompt-submit"], { stdin: JSON.stringify({ cwd: "/tmp" }), env: { A2A_AGENT: agent } });

// OS users, groups and files planted by hand: the file engine's.
describe.if(able && ON_FILES)("a shared store with a hostile member", () => {
  test("init --shared: the root and the directories holding members' files are sticky and the administrator's", async () => {
    const init = Bun.spawnSync([BIN, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: store }, stdout: "pipe", stderr: "pipe" });
    expect(init.stderr.toString()).toBe("");
    // Each agent reads its inbox first, as the README says: its inbox is its own.
    for (const [u, name] of [[USERS.alice, "alice"], [USERS.bob, "bob"], [USERS.carol, "carol"], [USERS.mallory, "mallory"]]) await ok(u, ["recv", "--as", name]);
    expect(mode(store)).toBe(0o3770);
    for (const d of ["inbox", "topics", "sessions", "subs", "tmp"]) {
      expect([d, mode(join(store, d)), statSync(join(store, d)).uid]).toEqual([d, 0o3770, 0]);
    }
    expect(mode(join(store, "slots"))).toBe(0o2770); // members replace each other's records there by design
    expect(mode(join(store, "inbox", "alice"))).toBe(0o3770);
    expect(statSync(join(store, "inbox", "alice", "keys")).uid).toBe(statSync(join(store, "inbox", "alice")).uid);
  });

  test("doctor in a store made with init --shared asks members for no setting, and finds nothing wrong", async () => {
    const d = await doctor(USERS.bob);
    expect(JSON.stringify(d)).not.toContain("A2A_SHARED");
    expect(ownerLines(d)).toEqual([expect.objectContaining({ level: "ok" })]);
  });

  test("mallory cannot replace alice's policy, so a name alice bound to bob stays bob's", async () => {
    await ok(USERS.alice, ["policy", "allowlist", "--as", "alice"]);
    await ok(USERS.alice, ["allow", `bob@${USERS.bob}`, "--as", "alice"]);
    const policy = join(store, "inbox", "alice", "policy.json");
    const forged = JSON.stringify({ a2a: 1, agent: "alice", mode: "open", allow: [], deny: [], updated_at: 1 });
    expect(shellAs(USERS.mallory, `printf '%s\\n' '${forged}' > /tmp/m-${USERS.mallory} && mv -f /tmp/m-${USERS.mallory} '${policy}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${policy}' '${policy}.old'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${join(store, "inbox", "alice")}' '${join(store, "inbox", "alice2")}'`)).not.toBe(0);
    expect(JSON.parse(readFileSync(policy, "utf8")).bind).toEqual({ bob: USERS.bob });
    const asBob = await as(USERS.mallory, ["send", "alice", "it is me, bob", "--as", "bob"]);
    expect(asBob.code).toBe(1);
    expect(asBob.stderr).toContain(`bound to OS user ${USERS.bob}, but OS user ${USERS.mallory} wrote it`);
  });

  test("mallory cannot take alice's mail away: not the message, not new/, not her inbox, not inbox/", async () => {
    const sent = JSON.parse(await ok(USERS.bob, ["send", "alice", "for alice only", "--as", "bob", "--json"]));
    const inbox = join(store, "inbox", "alice");
    const file = join(inbox, "new", `${sent.id}.json`);
    expect(shellAs(USERS.mallory, `rm -f '${file}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${join(inbox, "new")}' '${join(inbox, "old")}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${inbox}' '${join(store, "inbox", ".gone")}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${join(store, "inbox")}' '${join(store, "inbox.gone")}'`)).not.toBe(0);
    expect(JSON.parse(await ok(USERS.alice, ["recv", "--as", "alice", "--json"]))).toMatchObject({ id: sent.id, body: "for alice only", user: USERS.bob });
  });

  test("mallory cannot plant a claim (or a read message) for alice's own moves to put in place of bob's mail", async () => {
    const sent = JSON.parse(await ok(USERS.bob, ["send", "alice", "the real one", "--as", "bob", "--json"]));
    const inbox = join(store, "inbox", "alice");
    // A claim named for bob's message, carrying a forged body: a recv recovering claims would
    // rename it over new/ID.json. claim/, cur/, held/ and bad/ are alice's alone.
    const forged = messageFile(sent.id, "bob", "alice", "forged");
    for (const sub of ["claim", "cur", "held", "bad"]) {
      expect({ sub, mode: mode(join(inbox, sub)) & 0o070 }).toEqual({ sub, mode: 0o050 });
      const at = sub === "claim" ? `${sent.id},x,1,1` : `${sent.id}.json`;
      expect({ sub, planted: shellAs(USERS.mallory, `printf '%s\\n' '${forged}' > '${join(inbox, sub, at)}'`) }).not.toEqual({ sub, planted: 0 });
    }
    const got = JSON.parse(await ok(USERS.alice, ["recv", "--as", "alice", "--json"]));
    expect(got).toMatchObject({ id: sent.id, body: "the real one", user: USERS.bob });
  });

  test("mallory cannot silence bob's send --key with a key record of hers: the send says so instead of reporting a duplicate", async () => {
    const keys = join(store, "inbox", "alice", "keys");
    const hash = new Bun.CryptoHasher("sha256").update("bob\nK1").digest("hex").slice(0, 32);
    const planted = JSON.stringify({ a2a: 1, id: idAt(Date.now(), "000001"), host: "h", pid: 1, at: 1, delivered: true });
    expect(shellAs(USERS.mallory, `printf '%s\\n' '${planted}' > '${join(keys, hash + ".json")}'`)).toBe(0);
    const r = await as(USERS.bob, ["send", "alice", "pay me", "--key", "K1", "--as", "bob"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^a2a: the key record ${join(keys, hash + ".json").replace(/[/.]/g, "\\$&")} belongs to OS user ${USERS.mallory}, not to you: .*\n$`));
    expect(await ok(USERS.alice, ["recv", "--as", "alice", "--json"])).toBe(""); // nothing was delivered, and bob was told
  });

  test("a policy mallory plants where carol had none is ignored: carol's mail flows, doctor names it, carol can replace it", async () => {
    const policy = join(store, "inbox", "carol", "policy.json");
    expect(shellAs(USERS.mallory, `printf 'garbage' > '${policy}'`)).toBe(0); // a free name in a sticky directory
    await ok(USERS.bob, ["send", "carol", "still reaches carol", "--as", "bob"]);
    expect(JSON.parse(await ok(USERS.carol, ["recv", "--as", "carol", "--json"]))).toMatchObject({ body: "still reaches carol", user: USERS.bob });
    const lines = ownerLines(await doctor(USERS.carol));
    expect(lines).toContainEqual(expect.objectContaining({ level: "problem", detail: `${policy} belongs to OS user ${USERS.mallory}, not to OS user ${USERS.carol} (who owns ${join(store, "inbox", "carol")}): a2a ignores it` }));
    await ok(USERS.carol, ["policy", "open", "--as", "carol"]); // the owner of the sticky inbox replaces it
    expect(statSync(policy).uid).toBe(statSync(join(store, "inbox", "carol")).uid);
    // mallory may not write carol's policy through a2a either: it would not be trusted.
    const r = await as(USERS.mallory, ["policy", "allowlist", "--as", "carol"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`belongs to OS user ${USERS.carol}, not to you`);
  });

  test("topics: nobody renames a topic or topics/ away, and every message shows its OS user", async () => {
    await ok(USERS.bob, ["pub", "team.news", "bob's news", "--as", "bob"]);
    await ok(USERS.mallory, ["pub", "team.news", "forged news", "--as", "bob"]);
    const topic = join(store, "topics", "team.news");
    expect(shellAs(USERS.mallory, `mv '${topic}' '${topic}.old' && mkdir '${topic}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${join(store, "topics")}' '${join(store, "topics.old")}'`)).not.toBe(0);
    const got = (await ok(USERS.alice, ["sub", "team.news", "--from-start", "--json"])).trim().split("\n").map((l) => JSON.parse(l));
    expect(got.map((m) => [m.from, m.user, m.body])).toEqual([["bob", USERS.bob, "bob's news"], ["bob", USERS.mallory, "forged news"]]);
    expect(await ok(USERS.alice, ["sub", "team.news", "--from-start"])).toContain(`#2 from bob (OS user ${USERS.mallory})`);
  });

  test("a topic message its author deletes leaves a hole that readers pass over, not a wall", async () => {
    await ok(USERS.bob, ["pub", "team.hole", "bob's first", "--as", "bob"]);
    await ok(USERS.mallory, ["pub", "team.hole", "mallory's", "--as", "mallory"]);
    await ok(USERS.alice, ["sub", "team.hole", "--as", "alice-reader", "--from-start"]); // a durable reader, up to date
    await ok(USERS.bob, ["pub", "team.hole", "after the hole", "--as", "bob"]);
    expect(shellAs(USERS.mallory, `rm '${join(store, "topics", "team.hole", "000000000002.json")}'`)).toBe(0); // her own file
    const bodies = (text: string) => text.trim().split("\n").map((l) => JSON.parse(l).body);
    expect(bodies(await ok(USERS.carol, ["sub", "team.hole", "--from-start", "--json"]))).toEqual(["bob's first", "after the hole"]);
    expect(bodies(await ok(USERS.alice, ["sub", "team.hole", "--as", "alice-reader", "--json"]))).toEqual(["after the hole"]);
    await ok(USERS.bob, ["pub", "team.hole", "and after that", "--as", "bob"]);
    expect(bodies(await ok(USERS.alice, ["sub", "team.hole", "--as", "alice-reader", "--json"]))).toEqual(["and after that"]);
  });

  test("a session record mallory plants for alice is ignored: alice's prompt hook still announces her mail", async () => {
    // What silenced the hook before: a watermark above every id.
    // mallory's own hook has run before (sessions/ exists, whoever made it).
    await ok(USERS.bob, ["send", "mallory", "hello mallory", "--as", "bob"]);
    expect((await hook(USERS.mallory, "mallory")).stdout).toContain("hello mallory");
    const planted = JSON.stringify({ a2a: 1, name: "alice", announced: idAt(9_999_999_999_999, "ffffff"), blocked: [], blocks: 0 });
    expect(shellAs(USERS.mallory, `printf '%s\\n' '${planted}' > '${join(store, "sessions", "alice.json")}'`)).toBe(0);
    await ok(USERS.bob, ["send", "alice", "look at this", "--as", "bob"]);
    const r = await hook(USERS.alice, "alice");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain("look at this");
    expect(ownerLines(await doctor(USERS.alice, { A2A_AGENT: "alice" }))).toContainEqual(
      expect.objectContaining({ level: "problem", detail: expect.stringContaining(`sessions/alice.json belongs to OS user ${USERS.mallory}`) }),
    );
  });

  test("a session record mallory plants that alice cannot even read (mode 000) does not break alice's hooks either", async () => {
    await ok(USERS.bob, ["send", "carol", "for carol", "--as", "bob"]);
    await ok(USERS.carol, ["recv", "--as", "carol", "--json"]); // her inbox is hers now
    await ok(USERS.bob, ["send", "carol", "news for carol", "--as", "bob"]);
    expect(shellAs(USERS.mallory, `printf x > '${join(store, "sessions", "carol.json")}' && chmod 000 '${join(store, "sessions", "carol.json")}'`)).toBe(0);
    for (const event of ["session-start", "user-prompt-submit", "stop"]) {
      const r = await as(USERS.carol, ["hook", event], { stdin: JSON.stringify({ cwd: "/tmp" }), env: { A2A_AGENT: "carol" } });
      expect({ event, code: r.code, stderr: r.stderr }).toEqual({ event, code: 0, stderr: "" });
      if (event === "user-prompt-submit") expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain("news for carol");
    }
  });

  test("a message mallory makes unreadable (mode 000) in carol's inbox hides no other from carol's search", async () => {
    await ok(USERS.carol, ["search", "anything", "--as", "carol"]); // her index, caught up
    await ok(USERS.mallory, ["send", "carol", "planted", "--as", "mallory"]);
    expect(shellAs(USERS.mallory, `chmod 000 '${join(store, "inbox", "carol", "new")}'/*.json 2>/dev/null; true`)).toBe(0);
    await ok(USERS.bob, ["send", "carol", "the zanzibar report", "--as", "bob"]);
    const rows = JSON.parse(await ok(USERS.carol, ["search", "zanzibar", "--as", "carol", "--json"]));
    expect(rows.map((r: { kind: string; author: string }) => [r.kind, r.author])).toEqual([["message", "bob"]]);
    // Readable again: a member's gc refuses to run past a message it cannot read (the tests below run gc).
    expect(shellAs(USERS.mallory, `chmod 640 '${join(store, "inbox", "carol", "new")}'/*.json 2>/dev/null; true`)).toBe(0);
  });

  test("a sender whose clock lags a minute is announced by the prompt hook all the same", async () => {
    await ok(USERS.carol, ["send", "bob", "on time", "--as", "carol"]);
    expect(JSON.parse((await hook(USERS.bob, "bob")).stdout).hookSpecificOutput.additionalContext).toContain("on time");
    expect((await hook(USERS.bob, "bob")).stdout).toBe(""); // nothing new since
    // carol's machine is a minute behind: her message's id (its clock) sorts before "on time".
    const id = idAt(Date.now() - 60_000, "abcdef");
    const late = messageFile(id, "carol", "bob", "sent from a slow clock");
    expect(shellAs(USERS.carol, `printf '%s\\n' '${late}' > '${join(store, "inbox", "bob", "new", id + ".json")}'`)).toBe(0);
    const r = await hook(USERS.bob, "bob");
    expect(r.stdout).not.toBe("");
    const context = JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
    expect(context).toContain("sent from a slow clock");
    expect(context).not.toContain("on time"); // announced once only
  });

  test("blobs/ and blobs/sha256/ are sticky and the administrator's: mallory neither removes alice's blob nor closes the directory, and her gc leaves it", async () => {
    for (const d of [join(store, "blobs"), join(store, "blobs", "sha256")]) expect([d, mode(d), statSync(d).uid]).toEqual([d, 0o3770, 0]);
    const digest = (await ok(USERS.alice, ["put", "-"], { stdin: "alice's notes\n" })).trim();
    const blob = join(store, "blobs", "sha256", digest.slice(7));
    expect(shellAs(USERS.mallory, `rm -f '${blob}'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `mv '${blob}' '${blob}.x'`)).not.toBe(0);
    expect(shellAs(USERS.mallory, `chmod 2750 '${join(store, "blobs", "sha256")}'`)).not.toBe(0);
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(blob, old, old); // two hours old, and no record names it
    expect(JSON.parse(await ok(USERS.mallory, ["gc", "--json"])).blobs_removed).toBe(0);
    expect(await ok(USERS.bob, ["get", digest])).toBe("alice's notes\n");
    expect(JSON.parse(await ok(USERS.alice, ["gc", "--json"])).blobs_removed).toBe(1); // its owner's gc removes it
  });

  test("a file mallory plants under the digest of alice's attachment: alice's send keeps its own copy, bob gets alice's bytes, doctor names the planted file", async () => {
    while ((await ok(USERS.bob, ["recv", "--as", "bob", "--json"])) !== ""); // what earlier tests left
    const file = join(base, "plan.txt");
    writeFileSync(file, "the real plan\n", { mode: 0o644 });
    const hex = new Bun.CryptoHasher("sha256").update("the real plan\n").digest("hex");
    const blob = join(store, "blobs", "sha256", hex);
    expect(shellAs(USERS.mallory, `printf 'forged plan' > '${blob}' && chmod 440 '${blob}'`)).toBe(0); // a free name
    await ok(USERS.alice, ["send", "bob", "the plan", "--attach", file, "--as", "alice"]);
    const copy = `${blob}.${statSync(join(store, "inbox", "alice")).uid}`;
    expect([statSync(copy).uid, mode(copy)]).toEqual([statSync(join(store, "inbox", "alice")).uid, 0o440]);
    expect(shellAs(USERS.mallory, `rm -f '${copy}'`)).not.toBe(0); // sticky: alice's own
    const got = JSON.parse(await ok(USERS.bob, ["recv", "--as", "bob", "--json"]));
    expect(await ok(USERS.bob, ["get", got.attachments[0].digest])).toBe("the real plan\n");
    expect(ownerLines(await doctor(USERS.bob))).toContainEqual(expect.objectContaining({ level: "problem", detail: expect.stringContaining(`${blob} holds other bytes than its name says (from OS user ${USERS.mallory})`), fix: expect.stringContaining(`rm ${blob}`) }));
    expect(JSON.stringify(ownerLines(await doctor(USERS.bob)))).not.toContain(copy);
  });

  test("doctor hashes another member's blob file only when asked (--hash-blobs) or when the files of its digest differ in size: a run stays fast on big blobs", async () => {
    const lone = join(store, "blobs", "sha256", new Bun.CryptoHasher("sha256").update("nobody stored this\n").digest("hex"));
    expect(shellAs(USERS.mallory, `printf 'junk' > '${lone}' && chmod 440 '${lone}'`)).toBe(0);
    const quick = ownerLines(await doctor(USERS.bob));
    expect(JSON.stringify(quick)).not.toContain(lone); // one file of its digest: not read
    const hashed = JSON.parse((await as(USERS.bob, ["doctor", "--json", "--hash-blobs"])).stdout) as Awaited<ReturnType<typeof doctor>>;
    expect(ownerLines(hashed)).toContainEqual(expect.objectContaining({ level: "problem", detail: expect.stringContaining(`${lone} holds other bytes than its name says (from OS user ${USERS.mallory})`), fix: expect.stringContaining(`rm ${lone}`) }));
    expect(shellAs(USERS.mallory, `rm -f '${lone}'`)).toBe(0);
  });

  test("mallory plants files under the digest and under the name of alice's copy too: alice's copy takes a name nobody could guess, and bob gets alice's bytes", async () => {
    while ((await ok(USERS.bob, ["recv", "--as", "bob", "--json"])) !== "");
    const file = join(base, "plan2.txt");
    writeFileSync(file, "the second plan\n", { mode: 0o644 });
    const hex = new Bun.CryptoHasher("sha256").update("the second plan\n").digest("hex");
    const dir = join(store, "blobs", "sha256");
    const aliceUid = statSync(join(store, "inbox", "alice")).uid;
    expect(shellAs(USERS.mallory, `printf 'forged' > '${dir}/${hex}' && printf 'forged' > '${dir}/${hex}.${aliceUid}'`)).toBe(0);
    await ok(USERS.alice, ["send", "bob", "plan two", "--attach", file, "--as", "alice"]);
    const copies = readdirSync(dir).filter((n) => n.startsWith(`${hex}.${aliceUid}.`));
    expect(copies).toHaveLength(1);
    expect(statSync(join(dir, copies[0])).uid).toBe(aliceUid);
    const got = JSON.parse(await ok(USERS.bob, ["recv", "--as", "bob", "--json"]));
    expect(await ok(USERS.bob, ["get", got.attachments[0].digest])).toBe("the second plan\n");
    expect(await ok(USERS.alice, ["get", got.attachments[0].digest])).toBe("the second plan\n");
  });

  // mallory puts first the bytes of a file alice will attach, then, once alice has sent it, does
  // to her own file what its owner may: removes it, makes it unreadable, changes it.
  for (const [how, act] of [
    ["removes", "rm -f"],
    ["makes unreadable", "chmod 000"],
    ["changes", "chmod 640 BLOB && printf 'forged\\n' >"],
  ] as const) {
    test(`mallory ${how} the blob she stored first once alice named it: bob still gets alice's bytes, by get and by MCP`, async () => {
      while ((await ok(USERS.bob, ["recv", "--as", "bob", "--json"])) !== ""); // what earlier tests left
      const bytes = `predictable: ${how}\n`;
      const file = join(base, `predictable-${how.replace(/ /g, "-")}.txt`);
      writeFileSync(file, bytes, { mode: 0o644 });
      const digest = (await ok(USERS.mallory, ["put", file])).trim(); // hers: she may do anything to it later
      const blob = join(store, "blobs", "sha256", digest.slice(7));
      const sent = await ok(USERS.alice, ["send", "bob", "read this", "--attach", file, "--as", "alice"]);
      expect(sent).toContain("sent");
      expect(shellAs(USERS.mallory, `${act.replace("BLOB", `'${blob}'`)} '${blob}'`)).toBe(0);
      const msg = JSON.parse(await ok(USERS.bob, ["recv", "--as", "bob", "--peek", "--json"]));
      expect(msg.attachments).toEqual([expect.objectContaining({ digest, size: bytes.length })]);
      expect(await ok(USERS.bob, ["get", digest])).toBe(bytes);
      const mine = join(base, `bob-${how.replace(/ /g, "-")}`);
      mkdirSync(mine);
      chmodSync(mine, 0o777);
      await ok(USERS.bob, ["get", digest, "-o", join(mine, "got.txt")]);
      expect(readFileSync(join(mine, "got.txt"), "utf8")).toBe(bytes);
      expect(JSON.parse(await ok(USERS.mallory, ["gc", "--json"])).blobs_removed).toBe(0); // named: nobody's gc takes it
      const B = await connect(store, { ...otherUserEnv, A2A_AGENT: "bob" }, { prefix: asUser(USERS.bob, { initGroups: true, umask: "022" }), cwd: base });
      try {
        const got = await B.structured("check_messages", {});
        const att = got.messages.flatMap((m: { attachments?: { digest: string; path?: string; resource: string }[] }) => m.attachments ?? []).find((a: { digest: string }) => a.digest === digest);
        expect(att).toBeDefined();
        // a path only to a file bob can read whose bytes are the blob's (alice's copy: she could change it, so none)
        if (att.path !== undefined) expect(readFileSync(att.path, "utf8")).toBe(bytes);
        expect(att.path).not.toBe(blob);
        const res = await B.client.readResource({ uri: att.resource });
        expect((res.contents[0] as { text: string }).text).toBe(bytes);
      } finally {
        await B.close();
      }
    });
  }

  // Review 8: get checked another member's file in one read and printed from a second. Here the
  // race is planted, not hoped for: bob's get writes into a FIFO this test reads, so it stands
  // blocked after its first bytes while mallory rewrites her file in place; what bob printed
  // must be the bytes that were checked, all of them.
  test("mallory rewrites her blob in place while bob's get is printing it: bob prints the bytes that were checked, nothing of hers", async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(8 << 20 >> 4)); // 512 KiB, beyond the FIFO's buffer
    const big = new Uint8Array(8 << 20);
    for (let i = 0; i < 16; i++) big.set(bytes, i * bytes.length); // 8 MiB
    const file = join(base, "race.bin");
    writeFileSync(file, big, { mode: 0o644 });
    const digest = (await ok(USERS.mallory, ["put", file])).trim();
    const blob = join(store, "blobs", "sha256", digest.slice(7));
    const fifo = join(base, "race.fifo");
    expect(Bun.spawnSync(["mkfifo", "-m", "666", fifo]).exitCode).toBe(0);
    const get = Bun.spawn([...asUser(USERS.bob, { initGroups: true, umask: "022" }), "sh", "-c", `exec '${BIN}' get ${digest} > '${fifo}'`], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...otherUserEnv, A2A_DIR: store },
      stdout: "ignore",
      stderr: "pipe",
    });
    const fd = openSync(fifo, "r"); // returns once bob's shell opened it for writing
    const parts: Buffer[] = [];
    const buf = Buffer.alloc(64 << 10);
    const first = readSync(fd, buf, 0, 1, null); // bob's get is printing now, and blocks on the FIFO
    parts.push(Buffer.from(buf.subarray(0, first)));
    expect(shellAs(USERS.mallory, `chmod 640 '${blob}' && dd if=/dev/zero of='${blob}' bs=1M count=8 conv=notrunc`)).toBe(0);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) parts.push(Buffer.from(buf.subarray(0, n)));
    closeSync(fd);
    const code = await get.exited;
    const printed = Buffer.concat(parts);
    expect([printed.length, printed.equals(Buffer.from(big)), code, await new Response(get.stderr).text()]).toEqual([big.length, true, 0, ""]);
  });

  test("a member who stored the bytes itself gets a path to its own copy in MCP results", async () => {
    while ((await ok(USERS.bob, ["recv", "--as", "bob", "--json"])) !== "");
    const file = join(base, "both.txt");
    writeFileSync(file, "both have it\n", { mode: 0o644 });
    const digest = (await ok(USERS.mallory, ["put", file])).trim();
    await ok(USERS.bob, ["put", file]); // bob's own copy beside mallory's file
    await ok(USERS.alice, ["send", "bob", "same bytes", "--attach", file, "--as", "alice"]);
    expect(shellAs(USERS.mallory, `rm -f '${join(store, "blobs", "sha256", digest.slice(7))}'`)).toBe(0);
    const B = await connect(store, { ...otherUserEnv, A2A_AGENT: "bob" }, { prefix: asUser(USERS.bob, { initGroups: true, umask: "022" }), cwd: base });
    try {
      const got = await B.structured("check_messages", {});
      const att = got.messages.flatMap((m: { attachments?: { digest: string; path?: string }[] }) => m.attachments ?? []).find((a: { digest: string }) => a.digest === digest);
      expect(att.path).toBe(join(store, "blobs", "sha256", `${digest.slice(7)}.${statSync(join(store, "inbox", "bob")).uid}`));
      expect(readFileSync(att.path, "utf8")).toBe("both have it\n");
    } finally {
      await B.close();
    }
  });

  test("gc and copies: two hours on, a member's gc removes only its own files of a blob nothing names, and no file of one a record names", async () => {
    const gcLater = async (user: string) => {
      const r = await a2a(["gc", "--json"], { dir: store, prefix: [...asUser(user, { initGroups: true, umask: "022" }), "faketime", "-f", "+2h"], env: otherUserEnv });
      if (r.code !== 0) throw new Error(`${user}: a2a gc -> exit ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout).blobs_removed as number;
    };
    const aliceUid = statSync(join(store, "inbox", "alice")).uid;
    const put = async (name: string, text: string) => {
      writeFileSync(join(base, name), text, { mode: 0o644 });
      const digest = (await ok(USERS.mallory, ["put", join(base, name)])).trim();
      const blob = join(store, "blobs", "sha256", digest.slice(7));
      return { digest, file: join(base, name), blob, copy: `${blob}.${aliceUid}` };
    };
    const loose = await put("gc-loose.txt", "copied, then let go\n");
    await ok(USERS.alice, ["put", loose.file]);
    const named = await put("gc-named.txt", "copied, and named\n");
    await ok(USERS.alice, ["send", "carol", "keep this", "--attach", named.file, "--as", "alice"]);
    expect([loose.blob, loose.copy, named.blob, named.copy].map(existsSync)).toEqual([true, true, true, true]);
    expect(await gcLater(USERS.mallory)).toBeGreaterThanOrEqual(1);
    expect([loose.blob, loose.copy, named.blob, named.copy].map(existsSync)).toEqual([false, true, true, true]);
    expect(await ok(USERS.bob, ["get", loose.digest])).toBe("copied, then let go\n"); // alice's copy
    expect(await gcLater(USERS.alice)).toBeGreaterThanOrEqual(1);
    expect([loose.blob, loose.copy, named.blob, named.copy].map(existsSync)).toEqual([false, false, true, true]);
    expect((await as(USERS.bob, ["get", loose.digest])).code).toBe(3);
    expect(await ok(USERS.carol, ["get", named.digest])).toBe("copied, and named\n");
  });

  test("a store made before blobs/sha256/ existed: mallory's put does not make it hers, the store owner's next command makes it, and every put works", async () => {
    const old = join(base, "old-blobs-missing");
    Bun.spawnSync([BIN, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: old }, stdout: "pipe", stderr: "pipe" });
    rmSync(join(old, "blobs", "sha256"), { recursive: true });
    const dir = join(old, "blobs", "sha256");
    const refused = await as(USERS.mallory, ["put", "-"], { stdin: "first\n", dir: old });
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`${dir} is missing in this shared store, and only its owner (OS user root) or root may make it`)]);
    expect(existsSync(dir)).toBe(false);
    Bun.spawnSync([BIN, "doctor"], { env: { ...process.env, A2A_DIR: old }, stdout: "pipe", stderr: "pipe" }); // the store owner's (its verdict is not this test's)
    expect([mode(dir), statSync(dir).uid]).toEqual([0o3770, 0]);
    const digest = (await ok(USERS.mallory, ["put", "-"], { stdin: "first\n", dir: old })).trim();
    expect(await ok(USERS.alice, ["get", digest], { dir: old })).toBe("first\n");
  });

  test("a store made before this fix where mallory made blobs/sha256/ and closed it: no put uses it, her gc removes nobody's blob, doctor names it, with the fix", async () => {
    const old = join(base, "old-blobs");
    Bun.spawnSync([BIN, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: old }, stdout: "pipe", stderr: "pipe" });
    rmSync(join(old, "blobs", "sha256"), { recursive: true });
    const dir = join(old, "blobs", "sha256");
    expect(shellAs(USERS.mallory, `mkdir -m 3770 '${dir}'`)).toBe(0); // what an earlier release's first put made
    const blob = join(dir, new Bun.CryptoHasher("sha256").update("alice's\n").digest("hex"));
    writeFileSync(blob, "alice's\n", { mode: 0o440 }); // a blob of the store's owner, from before
    utimesSync(blob, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    for (const u of [USERS.alice, USERS.mallory]) {
      const r = await as(u, ["put", "-"], { stdin: "second\n", dir: old });
      expect([r.code, r.stderr]).toEqual([1, expect.stringContaining(`${dir} belongs to OS user ${USERS.mallory}, not to the store's owner (OS user root) or root`)]);
    }
    expect(JSON.parse(await ok(USERS.mallory, ["gc", "--json"], { dir: old })).blobs_removed).toBe(0);
    expect(existsSync(blob)).toBe(true);
    expect(shellAs(USERS.mallory, `chmod 2750 '${dir}'`)).toBe(0);
    const lines = ownerLines(await doctor(USERS.carol, {}, old));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${dir} belongs to OS user ${USERS.mallory}, not to OS user root (the store's owner)`), fix: `chown root ${dir} (as root)` }));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${dir} is closed to the group`) }));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${dir} is not sticky`) }));
  });

  test("a store made before this fix: a2a makes sticky what its user owns; doctor names the rest, with the fix", async () => {
    const old = join(base, "old");
    Bun.spawnSync([BIN, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: old }, stdout: "pipe", stderr: "pipe" });
    // As the earlier release left it: a root of 2770 and no top-level directory yet.
    for (const d of ["inbox", "topics", "sessions", "subs", "tmp", "slots", "locks", "streams", "peers", "identities", "tasks", "leases"]) rmSync(join(old, d), { recursive: true });
    chmodSync(old, 0o2770);
    await ok(USERS.bob, ["send", "alice", "hi", "--as", "bob"], { dir: old }); // bob makes inbox/, and alice's inbox
    expect(statSync(join(old, "inbox")).uid).not.toBe(0);
    await ok(USERS.alice, ["recv", "--as", "dave"], { dir: old }); // dave's inbox: alice's own
    chmodSync(join(old, "inbox", "dave"), 0o2770); // as an earlier release made it
    await ok(USERS.alice, ["recv", "--as", "dave"], { dir: old });
    expect(mode(join(old, "inbox", "dave"))).toBe(0o3770);
    const lines = ownerLines(await doctor(USERS.carol, {}, old));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${old} is not sticky`), fix: `chmod +t ${old} (as OS user root, its owner, or root)` }));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${join(old, "inbox")} belongs to OS user ${USERS.bob}, not to OS user root (the store's owner)`), fix: `chown root ${join(old, "inbox")} (as root)` }));
    expect(lines).toContainEqual(expect.objectContaining({ detail: expect.stringContaining(`${join(old, "inbox", "alice")} is not sticky: any member can rename or remove what others made in it: made by OS user ${USERS.bob}`) }));
  });
});
