// a2a mcp driven by the official MCP Inspector's CLI (@modelcontextprotocol/inspector, a
// devDependency), a client a2a's code had no part in: it lists the tools, calls them, and reads
// a blob resource, each call a fresh `a2a mcp` over stdio as the Inspector starts it. Checked on
// issue 25's tools: a message handed over with an attachment, read by another session with
// its path and resource; the blob read back through resources/read; the thread read whole.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, childEnv, ROOT, tempDir, testStore } from "../harness/run";

setDefaultTimeout(120_000);

const INSPECTOR = join(ROOT, "node_modules", ".bin", "mcp-inspector");

// One Inspector CLI call against `a2a mcp` as agent `as`; its JSON answer.
async function inspect(store: string, home: string, as: string, args: string[]): Promise<any> {
  const p = Bun.spawn({
    cmd: [INSPECTOR, "--cli", BIN, "mcp", "-e", `A2A_AGENT=${as}`, "-e", `A2A_DIR=${store}`, ...args],
    env: { ...childEnv({ dir: store }), HOME: home },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`inspector ${args.join(" ")}: exit ${code}: ${err}${out}`);
  return JSON.parse(out);
}

describe("the MCP Inspector CLI", () => {
  test("lists a2a's tools; a message with an attachment reaches another session with its path and resource; resources/read gives the bytes; read_thread gives the conversation", async () => {
    using d = tempDir();
    using store = testStore();
    const home = join(d.path, "home");
    const file = join(d.path, "notes.md");
    writeFileSync(file, "# schema\nthe index on email stays\n");
    const tools = (await inspect(store.path, home, "alice", ["--method", "tools/list"])).tools.map((t: { name: string }) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["send_message", "check_messages", "reply", "read_thread", "agent_publish", "agent_wait"]));
    const sent = (await inspect(store.path, home, "alice", ["--method", "tools/call", "--tool-name", "send_message", "--tool-arg", "to_id=bob", "--tool-arg", "message=the schema notes", "--tool-arg", `attach=${JSON.stringify([file])}`])).structuredContent;
    const digest = `sha256:${new Bun.CryptoHasher("sha256").update("# schema\nthe index on email stays\n").digest("hex")}`;
    expect(sent.attachments).toEqual([{ digest, name: "notes.md", size: 34, type: "text/markdown" }]);
    const got = (await inspect(store.path, home, "bob", ["--method", "tools/call", "--tool-name", "check_messages"])).structuredContent;
    expect(got.messages[0]).toMatchObject({ from: "alice", body: "the schema notes", attachments: [expect.objectContaining({ digest, resource: `a2a://blob/${digest}` })] });
    const read = await inspect(store.path, home, "bob", ["--method", "resources/read", "--uri", `a2a://blob/${digest}`]);
    expect(read.contents[0]).toMatchObject({ uri: `a2a://blob/${digest}`, text: "# schema\nthe index on email stays\n" });
    await inspect(store.path, home, "bob", ["--method", "tools/call", "--tool-name", "reply", "--tool-arg", `message_id=${sent.id}`, "--tool-arg", "message=agreed"]);
    const thread = (await inspect(store.path, home, "alice", ["--method", "tools/call", "--tool-name", "read_thread", "--tool-arg", `message_id=${sent.id}`])).structuredContent;
    expect(thread.messages.map((m: { from: string; body: string }) => [m.from, m.body])).toEqual([["alice", "the schema notes"], ["bob", "agreed"]]);
  });
});
