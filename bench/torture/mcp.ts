// MCP: the `a2a mcp` stdio server under hostile clients.
//
// 1. Raw JSON-RPC lines: after initialize, a series of malformed lines (not JSON, truncated
//    JSON, wrong shapes, invalid UTF-8, a NUL, a 2 MB line, a stray response, a batch, an
//    unknown method); after each, a ping must still be answered: the server keeps serving.
// 2. SDK client (Client + StdioClientTransport): unknown tools, wrong argument types, names
//    that are paths or carry NUL, oversize results, bad if_version: each must be a tool error
//    (isError) or a JSON-RPC error with a one-line message, the store unchanged, and the next
//    call must work.
// 3. A client that disconnects mid-wait: stdin closed, the stdout pipe closed (the answer then
//    has nowhere to go), the SDK client closed: the server must exit with status 0, promptly.
// 4. Leaks: many agent_wait calls on an already-published slot, then agent_publish+agent_wait
//    pairs (each wait must return exactly the result just published): the server's open file
//    descriptors must stay flat and its RSS must not grow with the number of calls.
// Skipped, with the reason, when `a2a mcp` does not answer initialize yet.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { childEnv } from "../../tests/harness/run";
import { connect as connectMcp, RawClient } from "../../tests/harness/mcp";
import { a2a, type Ctx, diffSnapshots, ms, msLine, type Outcome, scenarioDir, short, skip, snapshot, Verdict } from "./common";

const LIMIT = 4096; // A2A_MAX_BYTES of the servers here, so "over the limit" is cheap to send

// A server driven by raw lines (what a buggy or hostile client sends): tests/harness/mcp.ts.
const rawServer = (ctx: Ctx, store: string) => new RawClient(store, { A2A_MAX_BYTES: String(LIMIT) }, ctx.bin);

export async function mcp(ctx: Ctx): Promise<Outcome> {
  const dir = scenarioDir(ctx, "mcp");
  const store = join(dir, "store");
  const probe = rawServer(ctx, store);
  const init = await probe.initialize();
  if (!init?.result) {
    const code = await probe.exitWithin(2000);
    probe.kill();
    await probe.exited;
    const why = probe.stderr.trim().split("\n")[0] || (code === "alive" ? "no answer to initialize within 15 s" : `exited with ${code}`);
    return skip(`a2a mcp is not functional yet (${short(why, 200)})`);
  }
  const v = new Verdict();
  const figures: [string, string][] = [];
  figures.push(["malformed lines", await malformed(v, probe)]);
  probe.send(""); // nothing
  probe.proc.stdin.end();
  const probeExit = await probe.exitWithin(15_000);
  if (probeExit === "alive") probe.kill();
  v.check(probeExit === 0, "server did not exit cleanly on EOF", () => `exit ${probeExit}; stderr ${short(probe.stderr, 300)}`);
  v.check(probe.garbage.length === 0, "non-JSON on stdout", () => short(probe.garbage.join(" | "), 300));

  figures.push(["bad tool calls", await badCalls(ctx, v, store)]);
  figures.push(["disconnect mid-wait", await disconnects(ctx, v, store)]);
  const leaks = await leakCheck(ctx, v, store);
  figures.push(...leaks);
  return v.outcome("malformed lines, bad calls and disconnects handled; fds and RSS flat over the waits", figures);
}

async function malformed(v: Verdict, s: RawClient): Promise<string> {
  const lines: [string, string | Uint8Array][] = [
    ["not JSON", "this is not json"],
    ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":"pi'],
    ["empty object", "{}"],
    ["empty array", "[]"],
    ["null", "null"],
    ["number", "42"],
    ["string", '"hello"'],
    ["no method", '{"jsonrpc":"2.0","id":2}'],
    ["jsonrpc 1.0", '{"jsonrpc":"1.0","id":3,"method":"ping"}'],
    ["no jsonrpc field", '{"id":4,"method":"tools/list"}'],
    ["object id", '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}'],
    ["params a string", '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}'],
    ["tools/call without params", '{"jsonrpc":"2.0","id":6,"method":"tools/call"}'],
    ["tools/call params null", '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}'],
    ["a stray response", '{"jsonrpc":"2.0","id":99999,"result":{}}'],
    ["a stray error response", '{"jsonrpc":"2.0","id":99998,"error":{"code":1,"message":"x"}}'],
    ["a batch", '[{"jsonrpc":"2.0","id":8,"method":"ping"}]'],
    ["unknown notification", '{"jsonrpc":"2.0","method":"notifications/bogus","params":{}}'],
    ["cancel of an unknown request", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":123456}}'],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x22, 0x0a])],
    ["a NUL byte", '{"jsonrpc":"2.0","id":9,"method":"ping"\u0000}'],
    ["blank lines", "\n\r\n  "],
    ["a 2 MB line", '{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"' + "y".repeat(2 * 1024 * 1024) + '"}}'],
    ["deep nesting", "[".repeat(100_000) + "]".repeat(100_000)],
  ];
  let served = 0;
  for (const [label, line] of lines) {
    try {
      s.send(line);
    } catch (e) {
      v.fail("server stopped reading", `${label}: ${(e as Error).message}`);
      break;
    }
    const pong = await s.request("ping");
    if (!v.check(pong?.result !== undefined, "server stopped serving", () => `after ${label}: ${pong ? short(JSON.stringify(pong)) : "no answer"}; stderr ${short(s.stderr, 300)}`)) break;
    served++;
  }
  const unknown = await s.request("no/such/method");
  v.check(unknown?.error?.code === -32601, "unknown method not refused", () => short(JSON.stringify(unknown)));
  return `${served}/${lines.length} malformed lines each followed by a ping that was answered; unknown method -> error ${unknown?.error?.code}`;
}

// An SDK client on a server with the small size limit (tests/harness/mcp.ts).
const connect = (ctx: Ctx, store: string) => connectMcp(store, { A2A_MAX_BYTES: String(LIMIT) }, { bin: ctx.bin, name: "a2a-torture" });

const body = (r: any) => {
  try {
    return JSON.parse(r.content?.[0]?.text ?? "null");
  } catch {
    return undefined;
  }
};

async function badCalls(ctx: Ctx, v: Verdict, store: string): Promise<string> {
  const { client } = await connect(ctx, store);
  try {
    await client.callTool({ name: "agent_publish", arguments: { name: "keep", result: "kept" } });
    const calls: [string, string, Record<string, unknown>][] = [
      ["unknown tool", "agent_nope", {}],
      ["unknown tool with args", "rm_rf", { path: "/" }],
      ["wait: name a number", "agent_wait", { name: 123 }],
      ["wait: name null", "agent_wait", { name: null }],
      ["wait: timeout a string", "agent_wait", { name: "keep", timeout: "abc" }],
      ["wait: timeout negative", "agent_wait", { name: "keep", timeout: -5 }],
      ["wait: no name", "agent_wait", {}],
      ["publish: result an object", "agent_publish", { name: "keep", result: { a: 1 } }],
      ["publish: result missing", "agent_publish", { name: "keep" }],
      ["publish: name a path", "agent_publish", { name: "../../etc/x", result: "v" }],
      ["publish: name with NUL", "agent_publish", { name: "a\u0000b", result: "v" }],
      ["publish: name 10k chars", "agent_publish", { name: "x".repeat(10_000), result: "v" }],
      ["publish: name empty", "agent_publish", { name: "", result: "v" }],
      ["publish: name leading dot", "agent_publish", { name: ".hidden", result: "v" }],
      ["publish: result over the limit", "agent_publish", { name: "keep", result: "a".repeat(LIMIT + 1) }],
      ["publish: if_version a word", "agent_publish", { name: "keep", result: "v", if_version: "one" }],
      ["publish: if_version -1", "agent_publish", { name: "keep", result: "v", if_version: -1 }],
      ["publish: if_version 1.5", "agent_publish", { name: "keep", result: "v", if_version: 1.5 }],
      ["publish: if_version stale", "agent_publish", { name: "keep", result: "v", if_version: 7 }],
      ["start: task a number", "agent_start", { name: "keep", task: 5 }],
      ["append: chunk over the limit", "agent_append", { name: "keep2", chunk: "c".repeat(LIMIT + 1) }],
      ["clear: name an array", "agent_clear", { name: ["a", "b"] }],
    ];
    let errors = 0;
    for (const [label, tool, args] of calls) {
      const before = snapshot(store);
      let text = "";
      try {
        const r: any = await client.callTool({ name: tool, arguments: args as any });
        text = r.content?.[0]?.text ?? "";
        if (!v.check(r.isError === true, "bad call accepted", () => `${label}: ${short(text)}`)) continue;
      } catch (e) {
        text = (e as Error).message; // a JSON-RPC error is an acceptable refusal too
      }
      errors++;
      v.check(!text.includes("\n") && text.length < 400, "error not one short line", () => `${label}: ${short(text, 300)}`);
      const changed = diffSnapshots(before, snapshot(store)).filter((d) => !d.includes("/locks"));
      v.check(changed.length === 0, "rejected call changed the store", () => `${label}: ${changed.join(", ")}`);
      const next: any = await client.callTool({ name: "agent_wait", arguments: { name: "keep", timeout: 5 } });
      v.check(body(next)?.result === "kept", "server broken after a bad call", () => `${label}: next agent_wait gave ${short(JSON.stringify(next))}`);
    }
    return `${errors}/${calls.length} bad calls refused with a one-line error, store unchanged, next call fine`;
  } finally {
    await client.close();
  }
}

// Waits up to limitMs for process `pid` to be gone (or a zombie awaiting its parent).
async function goneWithin(pid: number, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  for (;;) {
    let state = "";
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] ?? "";
    } catch {
      return true;
    }
    if (state === "Z") return true;
    if (Date.now() > end) return false;
    await Bun.sleep(20);
  }
}

async function disconnects(ctx: Ctx, v: Verdict, store: string): Promise<string> {
  const out: string[] = [];
  // a. stdin closed while a wait is pending.
  {
    const s = rawServer(ctx, store);
    await s.initialize();
    void s.request("tools/call", { name: "agent_wait", arguments: { name: "never-a", timeout: 60 } }, 60_000);
    await s.request("ping"); // the wait is in the server's hands
    s.proc.stdin.end();
    const code = await s.exitWithin(15_000);
    if (code === "alive") s.kill();
    out.push(`stdin closed mid-wait: exit ${code}`);
    v.check(code === 0, "server did not exit cleanly when its client left", () => `stdin closed mid-wait: ${code}; ${short(s.stderr, 300)}`);
  }
  // b. the client stops reading (its end of stdout closed), then the wait's answer is due.
  //    bash runs `a2a mcp | head -n 1`: head takes the initialize answer and leaves, so the
  //    pipe has no reader; bash exits with the server's own status (PIPESTATUS).
  {
    const p = Bun.spawn({
      cmd: ["bash", "-c", '"$0" mcp | head -n 1 >/dev/null; exit ${PIPESTATUS[0]}', ctx.bin],
      env: childEnv({ dir: store }),
      stdin: "pipe",
      stdout: "ignore",
      stderr: "pipe",
    });
    const line = (o: unknown) => p.stdin.write(JSON.stringify(o) + "\n");
    line({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    line({ jsonrpc: "2.0", method: "notifications/initialized" });
    line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "agent_wait", arguments: { name: "never-b", timeout: 60 } } });
    p.stdin.flush();
    await a2a(ctx, ["publish", "never-b", "now"], { dir: store });
    const exited = await Promise.race([p.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
    if (!exited) {
      p.stdin.end(); // it may legitimately wait for stdin to end
      await Promise.race([p.exited, Bun.sleep(15_000)]);
    }
    if (p.exitCode === null) p.kill(9);
    await p.exited;
    const stderr = await new Response(p.stderr).text();
    out.push(`stdout reader gone, answer due: exit ${p.exitCode ?? p.signalCode}${exited ? "" : " (only after stdin closed too)"}`);
    v.check(p.exitCode === 0, "server did not exit cleanly when its client left", () => `stdout reader gone: exit ${p.exitCode ?? p.signalCode} (141 = SIGPIPE); ${short(stderr, 300)}`);
    v.check(!/\n\s+at /.test(stderr), "stack trace on stderr", () => short(stderr, 300));
  }
  // c. the SDK client closes with a wait pending.
  {
    const { client, transport } = await connect(ctx, store);
    const pending = client.callTool({ name: "agent_wait", arguments: { name: "never-c", timeout: 60 } }).catch(() => "rejected");
    await client.ping();
    const pid = transport.pid!;
    const t0 = performance.now();
    await client.close();
    await pending;
    const gone = await goneWithin(pid, 15_000);
    out.push(`SDK client closed mid-wait: server ${gone ? `gone after ${ms(performance.now() - t0)}` : "still running"}`);
    v.check(gone, "server outlived its client", () => `pid ${pid} alive 15 s after the SDK client closed`);
  }
  return out.join("; ");
}

function procStats(pid: number): { fds: number; rssKb: number } {
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return { fds, rssKb: m ? Number(m[1]) : NaN };
}

async function leakCheck(ctx: Ctx, v: Verdict, store: string): Promise<[string, string][]> {
  const waits = ctx.short ? 1000 : 10_000;
  const pairs = ctx.short ? 200 : 2000;
  const { client, transport } = await connect(ctx, store);
  try {
    const pid = transport.pid!;
    await client.callTool({ name: "agent_publish", arguments: { name: "ready", result: "ready-result" } });
    // Sampled every 2% of the calls; a window's minimum RSS filters out garbage not yet
    // collected, so "early" vs "late" compares what is really retained.
    const samples: { call: number; fds: number; rssKb: number }[] = [];
    const total = waits + pairs;
    const every = Math.max(1, Math.floor(total / 50));
    const sample = (call: number) => call % every === 0 && samples.push({ call, ...procStats(pid) });
    const waitMs: number[] = [];
    let wrong = 0;
    for (let i = 1; i <= waits; i++) {
      const t0 = performance.now();
      const r: any = await client.callTool({ name: "agent_wait", arguments: { name: "ready", timeout: 5 } });
      waitMs.push(performance.now() - t0);
      if (body(r)?.result !== "ready-result") wrong++;
      sample(i);
    }
    v.check(wrong === 0, "agent_wait returned the wrong result", () => `${wrong} of ${waits}`);
    let version = 0, pairWrong = 0;
    const pairMs: number[] = [];
    for (let i = 1; i <= pairs; i++) {
      const t0 = performance.now();
      const text = `pair-${i}-${"é".repeat(i % 50)}`;
      const p: any = await client.callTool({ name: "agent_publish", arguments: { name: "pair", result: text } });
      const pv = body(p)?.version;
      const w: any = await client.callTool({ name: "agent_wait", arguments: { name: "pair", timeout: 5, after_version: version } });
      pairMs.push(performance.now() - t0);
      const got = body(w);
      if (got?.result !== text || got?.version !== pv) pairWrong++;
      version = pv ?? version;
      sample(waits + i);
    }
    v.check(pairWrong === 0, "publish+wait pair returned the wrong result", () => `${pairWrong} of ${pairs}`);
    const early = samples.filter((x) => x.call > total * 0.1 && x.call <= total * 0.3);
    const late = samples.filter((x) => x.call > total * 0.8);
    const fdsEarly = Math.max(...early.map((x) => x.fds)), fdsLate = Math.max(...late.map((x) => x.fds));
    const rssEarly = Math.min(...early.map((x) => x.rssKb)), rssLate = Math.min(...late.map((x) => x.rssKb));
    const rssMax = Math.max(...samples.map((x) => x.rssKb));
    v.check(fdsLate - fdsEarly <= 2, "fd leak", () => samples.map((x) => `${x.call}: ${x.fds}`).join(", "));
    // A leak of even 1 KB per call shows as 10+ MB over the long form's 12,000 calls.
    const growthKb = rssLate - rssEarly;
    v.check(growthKb <= Math.max(16 * 1024, rssEarly * 0.25), "RSS grows with calls", () => samples.map((x) => `${x.call}: ${Math.round(x.rssKb / 1024)} MB`).join(", "));
    const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
    return [
      ["leak check", `${waits} agent_wait on a published slot, then ${pairs} publish/wait pairs (server pid ${pid}): open fds ${fdsEarly} at 10-30% of the calls -> ${fdsLate} in the last 20%; RSS (window minimum) ${mb(rssEarly)} -> ${mb(rssLate)} (${growthKb >= 0 ? "+" : ""}${mb(growthKb)}), peak ${mb(rssMax)}`],
      ["agent_wait call (already published), client side", msLine(waitMs)],
      ["agent_publish + agent_wait pair, client side", msLine(pairMs)],
    ];
  } finally {
    await client.close();
  }
}
