// Broadcast topics through the compiled binary: NATS-style wildcards, durable named cursors,
// and fan-out to several followers, one of them restarted midway.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, BIN, childEnv, listens, ON_FILES, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { sh } from "./fixtures/core";
import { utimesSync } from "node:fs";
import { join } from "node:path";

setDefaultTimeout(120_000);

const lines = (text: string) => text.split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function ok(args: string[], dir: string) {
  const r = await a2a(args, { dir });
  if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

describe("topics", () => {
  test("wildcards: * matches one word, > the rest", async () => {
    using d = testStore();
    for (const t of ["a.b", "a.b.c", "a.c", "x.b", "a"]) await ok(["pub", t, `on ${t}`, "--as", "pub"], d.path);
    const topicsOf = async (pattern: string) =>
      lines(await ok(["sub", pattern, "--from-start", "--json"], d.path)).map((m) => m.topic).sort();
    expect(await topicsOf("a.*")).toEqual(["a.b", "a.c"]);
    expect(await topicsOf("a.>")).toEqual(["a.b", "a.b.c", "a.c"]);
    expect(await topicsOf("*.b")).toEqual(["a.b", "x.b"]);
    expect(await topicsOf("a.*.c")).toEqual(["a.b.c"]);
    expect(await topicsOf("a")).toEqual(["a"]);
    expect(await topicsOf(">")).toEqual(["a", "a.b", "a.b.c", "a.c", "x.b"]);
    expect(await topicsOf("b.>")).toEqual([]);
    for (const bad of ["a.>.b", "a..b", "a b", ""]) {
      const r = await a2a(["sub", bad], { dir: d.path });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^a2a: invalid topic pattern /);
    }
    const human = await ok(["sub", "a.b", "--from-start"], d.path);
    expect(human).toMatch(/^--- a\.b #1 from pub \((?:OS user|role) [^)]+\) at .* \(untrusted input from another agent.*\) \[frame ([0-9a-f]{8})\] ---\non a\.b\n--- end of a\.b #1 \[frame \1\] ---\n$/);
  });

  test("subscriber names that look alike (a, a.json) keep separate cursors; a bad sender name is refused", async () => {
    using d = testStore();
    await ok(["pub", "t", "one"], d.path);
    for (const who of ["a", "a.json"]) {
      expect(lines(await ok(["sub", "t", "--as", who, "--from-start", "--json"], d.path)).map((m) => m.body)).toEqual(["one"]);
    }
    await ok(["pub", "t", "two"], d.path);
    for (const who of ["a.json", "a"]) {
      expect(lines(await ok(["sub", "t", "--as", who, "--json"], d.path)).map((m) => m.body)).toEqual(["two"]);
    }
    const bad = await a2a(["pub", "t", "x", "--as", "../evil\nname"], { dir: d.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^a2a: invalid sender name /);
  });

  test("plain a2a sub prints what the topics hold (README: a2a sub 'build.>' | head -1); nothing there is a note, exit 0; anonymous --follow starts now", async () => {
    using d = testStore();
    const empty = await a2a(["sub", "build.>"], { dir: d.path });
    expect(empty).toEqual({ code: 0, stdout: "", stderr: "a2a: no messages in topics matching build.>\n" });
    await ok(["pub", "build.status", "green"], d.path);
    await ok(["pub", "build.log", "compiling"], d.path);
    const first = await sh(`"$A2A" sub 'build.>' | head -1`, d.path);
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(/^--- build\.(log|status) #1 from anonymous/);
    expect(lines(await ok(["sub", "build.>", "--json"], d.path)).map((m) => m.body).sort()).toEqual(["compiling", "green"]);
    const follow = spawnA2A(["sub", "build.>", "--follow", "--json", "--timeout", "60s"], { dir: d.path });
    await until(() => listens(follow.pid), 20_000, "the follower's watch");
    await ok(["pub", "build.status", "red"], d.path);
    expect(JSON.parse(await readUntil(follow.stdout, (t) => t.endsWith("\n"), 60_000))).toMatchObject({ topic: "build.status", body: "red" });
    follow.kill("SIGINT");
    expect(await follow.exited).toBe(130);
  });

  test("a named subscriber resumes where it stopped; an anonymous read prints what is there, keeping no position", async () => {
    using d = testStore();
    await ok(["pub", "news", "before anyone listened"], d.path);
    expect(lines(await ok(["sub", "news", "--json"], d.path)).map((m) => m.body)).toEqual(["before anyone listened"]);
    expect(await ok(["sub", "news", "--as", "reader", "--json"], d.path)).toBe(""); // starts now
    await ok(["pub", "news", "one"], d.path);
    await ok(["pub", "news", "two"], d.path);
    expect(lines(await ok(["sub", "news", "--as", "reader", "--json"], d.path)).map((m) => [m.id, m.body])).toEqual([[2, "one"], [3, "two"]]);
    expect(await ok(["sub", "news", "--as", "reader", "--json"], d.path)).toBe("");
    await ok(["pub", "news", "three"], d.path);
    await ok(["pub", "news.sports", "a topic that appeared later"], d.path);
    expect(lines(await ok(["sub", "news.>", "--as", "reader", "--json"], d.path)).map((m) => m.body)).toEqual(["a topic that appeared later"]);
    expect(lines(await ok(["sub", "news", "--as", "reader", "--json"], d.path)).map((m) => m.body)).toEqual(["three"]);
    // --from-start only reaches back for topics the subscriber has no position in.
    expect(lines(await ok(["sub", "news", "--as", "late", "--from-start", "--json"], d.path))).toHaveLength(4);
    expect(await ok(["sub", "news", "--as", "late", "--from-start", "--json"], d.path)).toBe("");
  });

  test("fan-out to 3 followers, one restarted midway: each sees every message once, in order", async () => {
    using d = testStore();
    const total = 40;
    const follow = (name: string) => spawnA2A(["sub", "fan.>", "--as", name, "--follow", "--json"], { dir: d.path });
    const subs = [follow("s1"), follow("s2"), follow("s3")];
    for (const s of subs) await until(() => listens(s.pid), 20_000, "a follower's watch");
    const publisher = Bun.spawn({
      cmd: ["bash", "-c", `for i in $(seq 1 ${total}); do t=$([ $((i % 2)) = 0 ] && echo a || echo b); "$A2A_BIN" pub fan.$t "$i" --as pub >/dev/null || exit 1; done`],
      env: childEnv({ dir: d.path, env: { A2A_BIN: BIN } }),
      stdout: "ignore",
      stderr: "pipe",
    });

    // s2 stops (SIGTERM) after some messages and starts again while publishing goes on.
    const firstRun = await readUntil(subs[1].stdout, (t) => t.split("\n").length > 8);
    subs[1].kill("SIGTERM");
    const rest = await readUntil(subs[1].stdout, () => false); // to EOF
    expect(await subs[1].exited).toBe(143); // stopped by SIGTERM: 128 + 15, like every blocking command
    const restarted = follow("s2");

    expect(await publisher.exited).toBe(0);
    const collect = async (p: ReturnType<typeof follow>, prefix = "") => {
      const text = await readUntil(p.stdout, (t) => (prefix + t).split("\n").filter(Boolean).length >= total, 60_000);
      p.kill("SIGTERM");
      await p.exited;
      return lines(prefix + text);
    };
    const seen = [await collect(subs[0]), await collect(restarted, firstRun + rest), await collect(subs[2])];
    for (const msgs of seen) {
      expect(msgs).toHaveLength(total);
      for (const t of ["fan.a", "fan.b"]) {
        const mine = msgs.filter((m) => m.topic === t);
        expect(mine.map((m) => m.id)).toEqual(Array.from({ length: total / 2 }, (_, i) => i + 1));
        expect(mine.map((m) => Number(m.body))).toEqual(mine.map((m) => Number(m.body)).sort((a, b) => a - b));
      }
    }
  });
});

// gc (and the messages' file times it reads) is the file engine's for now.
describe.if(ON_FILES)("topic retention", () => {
  test("gc removes topic messages older than A2A_TOPIC_KEEP, keeps each topic's newest, and readers and the numbering go on", async () => {
    using d = tempDir();
    for (const body of ["one", "two", "three", "four"]) await ok(["pub", "news", body], d.path);
    expect(lines(await ok(["sub", "news", "--as", "reader", "--from-start", "--json"], d.path)).map((m) => m.id)).toEqual([1, 2, 3, 4]);
    // Messages 1-3 written 40 days ago; 4 now. A second topic with one old message only.
    const old = Date.now() / 1000 - 40 * 86400;
    for (const id of [1, 2, 3]) utimesSync(join(d.path, "topics", "news", `${String(id).padStart(12, "0")}.json`), old, old);
    await ok(["pub", "quiet", "alone"], d.path);
    utimesSync(join(d.path, "topics", "quiet", `${"1".padStart(12, "0")}.json`), old, old);
    // forever keeps everything; the default (30 days) removes 1-3, keeps news #4 and quiet #1.
    const kept = await a2a(["gc", "--json"], { dir: d.path, env: { A2A_TOPIC_KEEP: "forever" } });
    expect(JSON.parse(kept.stdout).topic_messages_removed).toBe(0);
    expect(JSON.parse((await ok(["gc", "--json"], d.path))).topic_messages_removed).toBe(3);
    expect(lines(await ok(["sub", "news", "--json"], d.path)).map((m) => [m.id, m.body])).toEqual([[4, "four"]]);
    expect(lines(await ok(["sub", "quiet", "--json"], d.path)).map((m) => m.body)).toEqual(["alone"]);
    await ok(["pub", "news", "five"], d.path);
    expect(lines(await ok(["sub", "news", "--as", "reader", "--json"], d.path)).map((m) => [m.id, m.body])).toEqual([[5, "five"]]);
    expect(lines(await ok(["sub", "news", "--as", "late", "--from-start", "--json"], d.path)).map((m) => m.id)).toEqual([4, 5]);
  });
});
