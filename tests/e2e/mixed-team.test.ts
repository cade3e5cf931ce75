// A mixed team on one bus: a real Claude Code session and a real Codex CLI session (each offline
// against its own model API stand-in: fixtures/messages-api.ts, fixtures/openai-responses.ts),
// one user, one HOME set up by `a2a setup claude` and `a2a setup codex`. Codex waits for a
// result Claude Code publishes (agent_wait), and its answer (send_message) reaches Claude Code:
// in the inbox of the Claude Code session's name, and in the next Claude Code session's first
// request through its UserPromptSubmit hook.
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { a2a, collect, tempDir, testStore } from "../harness/run";
import * as claude from "./fixtures/claude";
import * as cx from "./fixtures/codex";
import * as messages from "./fixtures/messages-api";
import * as responses from "./fixtures/openai-responses";

setDefaultTimeout(120_000);

test("Claude Code publishes a design, a Codex session waiting for it reviews it, and the review reaches Claude Code's inbox and its next prompt", async () => {
  if ((await claude.skipped("the mixed team (Claude Code)")) || (await cx.skipped("the mixed team (Codex CLI)"))) return;
  using d = tempDir();
  using store = testStore();
  const home = join(d.path, "home");
  const frontend = join(d.path, "frontend"); // Claude Code works here: its name on the bus is "frontend"
  const reviewer = join(d.path, "reviewer"); // Codex works here: "reviewer"
  for (const dir of [home, frontend, reviewer]) mkdirSync(dir);
  const o = { home, store: store.path };
  for (const p of [claude.setup(o), cx.setup(o)]) {
    const r = await collect(p);
    if (r.code !== 0) throw new Error(`a2a setup failed: ${r.stderr}`);
  }

  // Codex: wait for "design", then send the review to the design's author.
  let codexWaiting!: () => void;
  const waiting = new Promise<void>((r) => (codexWaiting = r));
  let waited = "";
  const openai = responses.standIn((r) => {
    if (!responses.toolNames(r).includes("mcp__a2a__agent_wait")) return [{ text: "ok" }];
    const out = responses.toolOutputs(r);
    if (!out.length) {
      codexWaiting();
      return [{ tool: "mcp__a2a__agent_wait", input: { name: "design", timeout: 90 } }];
    }
    if (/"name":"design"/.test(out[0])) {
      waited = out[0];
      const design = JSON.parse(out[0]);
      return [{ tool: "mcp__a2a__send_message", input: { to_id: "frontend", message: `reviewed ${design.name} v${design.version} ("${design.result}"): approved` } }];
    }
    return [{ text: "review sent" }];
  });

  // Claude Code: publish the design; in its next session, read what came back.
  const anthropic = messages.standIn((r) => {
    if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__agent_publish")) return [{ text: "ok" }];
    const results = messages.toolResults(r);
    if (/publish the design/.test(r.raw)) return results.length ? [{ text: "published" }] : [{ tool: "mcp__a2a__agent_publish", input: { name: "design", result: "the spec, version 1" } }];
    if (results.some((t) => /approved/.test(t))) return [{ text: "read the review" }];
    if (/Stop hook/.test(messages.newText(r))) return [{ tool: "mcp__a2a__check_messages", input: {} }];
    return [{ text: "noted" }];
  });
  try {
    const codexSession = cx.session("review the design when it is ready", reviewer, { ...o, apiUrl: openai.url });
    await waiting; // Codex's agent_wait is on its way to its a2a mcp
    const published = await claude.session("publish the design", frontend, { ...o, apiUrl: anthropic.url });
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout).result).toBe("published");
    const c = await codexSession;
    expect(c.code).toBe(0);
    expect(JSON.parse(waited)).toMatchObject({ ok: true, name: "design", result: "the spec, version 1", version: 1 });
    expect(c.stdout.trim().split("\n").at(-1)).toBe("review sent");

    // The review waits in Claude Code's inbox, from the Codex session's name.
    const inbox = JSON.parse((await a2a(["inbox", "--as", "frontend", "--json"], { dir: o.store })).stdout);
    expect(inbox.unread).toEqual([expect.objectContaining({ from: "reviewer", body: 'reviewed design v1 ("the spec, version 1"): approved' })]);

    // The next Claude Code session in that directory is "frontend" again: its prompt hook puts
    // the review in the first request; it reads it with check_messages when its stop is held.
    const next = await claude.session("anything new?", frontend, { ...o, apiUrl: anthropic.url });
    expect(next.code).toBe(0);
    const first = anthropic.requests.find((r) => /anything new\?/.test(r.raw) && (r.body.tools ?? []).length)!;
    expect(first.raw).toMatch(/a2a: 1 new message for you \(\\"frontend\\"\) arrived since the last prompt/);
    expect(first.raw).toContain("reviewed design v1");
    expect(JSON.parse(next.stdout).result).toBe("read the review");
    expect(JSON.parse((await a2a(["inbox", "--as", "frontend", "--json"], { dir: o.store })).stdout).unread).toEqual([]);
  } finally {
    openai.close();
    anthropic.close();
  }
});
