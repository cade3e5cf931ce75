// Traps planted inside a live store (bench/torture/hostile-store.ts found these): each test
// plants one, then checks that the rest of the store keeps working through the binary.
import { expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { a2a, ON_FILES, tempDir } from "../harness/run";

setDefaultTimeout(60_000);

// Files planted inside the store's directories: the file engine's.
test.if(ON_FILES)("a FIFO at the next version of one task does not stop claims of the others", async () => {
  using d = tempDir();
  const add = async (p: string) => (await a2a(["task", "add", "q", p], { dir: d.path })).stdout.trim();
  const damaged = await add("first");
  const other = await add("second");
  expect(spawnSync("mkfifo", [join(d.path, "tasks", "q", damaged, "00000002.json")]).status).toBe(0);
  const c = await a2a(["task", "claim", "q", "--json"], { dir: d.path });
  expect({ code: c.code, stderr: c.stderr }).toEqual({ code: 0, stderr: "" });
  const claim = JSON.parse(c.stdout);
  expect({ id: claim.id, payload: claim.payload }).toEqual({ id: other, payload: "second" });
  const done = await a2a(["task", "done", claim.id, claim.token, "ok"], { dir: d.path });
  expect(done.code).toBe(0);
  // Nothing else is claimable: the damaged task is named, in one clean line, not a hang.
  const again = await a2a(["task", "claim", "q"], { dir: d.path });
  expect(again.code).not.toBe(0);
  expect(again.stderr).toMatch(/^a2a: .*00000002\.json.*\n$/);
});

test.if(ON_FILES)("a foreign file planted ahead of a topic's log leaves no gap that hides later messages", async () => {
  using d = tempDir();
  const pub = async (body: string) => expect((await a2a(["pub", "t.a", body, "-q"], { dir: d.path })).code).toBe(0);
  await pub("one");
  // The next id is 2: a dangling link at 3, as a foreign program might leave.
  symlinkSync(join(d.path, "nowhere"), join(d.path, "topics", "t.a", "000000000003.json"));
  await pub("two");
  await pub("three");
  const s = await a2a(["sub", "t.a", "--from-start", "--json"], { dir: d.path });
  expect({ code: s.code, stderr: s.stderr }).toEqual({ code: 0, stderr: "" });
  const seen = s.stdout.trim().split("\n").map((l) => JSON.parse(l).body);
  expect(seen).toEqual(["one", "two", "three"]);
});

test.if(ON_FILES)("a foreign file at a send's key record is refused at once, naming it, instead of waiting the lease", async () => {
  using d = tempDir();
  expect((await a2a(["send", "bob", "first", "--as", "alice", "-q"], { dir: d.path })).code).toBe(0); // makes the inbox
  mkdirSync(join(d.path, "inbox", "bob", "keys"), { recursive: true });
  const hash = createHash("sha256").update("alice\nk1").digest("hex").slice(0, 32);
  expect(spawnSync("mkfifo", [join(d.path, "inbox", "bob", "keys", `${hash}.json`)]).status).toBe(0);
  // A lease of 10 minutes: waiting it out would blow the test's bound.
  const r = await a2a(["send", "bob", "second", "--as", "alice", "--key", "k1"], { dir: d.path, env: { A2A_CLAIM_LEASE_MS: "600000" } });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^a2a: the key record .*${hash}\\.json is not a regular file.*: remove it, then send again\\n$`));
  const unread = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
  expect(unread.unread.map((m: { body?: string; preview?: string }) => m.body ?? m.preview)).toEqual(["first"]);
}, 30_000);
