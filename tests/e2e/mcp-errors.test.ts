// JSON-RPC errors as the protocol defines them (issue 37, findings 2 and 5), through raw pipes
// to the compiled binary: -32602 with one line for parameters a method refuses and for a tool the
// session does not offer; -32602 for a cursor a2a never issued; -32002 with data.uri for a
// resource that is not there, whatever its scheme; no "MCP error -326xx:" inside the message.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { RawClient } from "../harness/mcp";
import { testStore } from "../harness/run";

setDefaultTimeout(60_000);

describe("a2a mcp: protocol errors", () => {
  test("invalid params, unknown tools, bogus cursors and missing resources get the protocol's codes, each in one line", async () => {
    using d = testStore();
    const c = new RawClient(d.path, {});
    try {
      const bad = await c.request("initialize", { protocolVersion: "2025-11-25", clientInfo: { name: "t", version: "1" } });
      expect(bad.error).toEqual({ code: -32602, message: "invalid params of initialize: capabilities is required" });
      expect((await c.initialize())?.result?.serverInfo?.name).toBe("a2a");
      const errorOf = async (method: string, params: unknown) => structuredClone((await c.request(method, params))?.error); // a copy: matchers must not touch what c.seen holds
      expect(await errorOf("tools/call", { name: "no_such_tool", arguments: {} })).toEqual({ code: -32602, message: expect.stringMatching(/^unknown tool "no_such_tool": tools\/list names the tools/) });
      expect(await errorOf("tools/call", { name: 42, arguments: {} })).toEqual({ code: -32602, message: "invalid params of tools/call: name: expected string, got number 42" });
      expect(await errorOf("resources/read", {})).toEqual({ code: -32602, message: "invalid params of resources/read: uri is required" });
      for (const method of ["tools/list", "resources/list", "resources/templates/list"]) {
        expect(await errorOf(method, { cursor: "bogus" })).toMatchObject({ code: -32602, message: expect.stringMatching(new RegExp(`^invalid cursor "bogus" for ${method}`)) });
      }
      for (const uri of ["a2a://slot/missing", `a2a://blob/sha256:${"0".repeat(64)}`, "file:///etc/passwd"]) {
        expect(await errorOf("resources/read", { uri })).toMatchObject({ code: -32002, data: { uri } });
      }
      for (const m of c.seen) if (m.error) expect(m.error.message).not.toMatch(/MCP error|\n/);
      // A tool the session offers still answers its own errors as tool results, which a model reads.
      const r = (await c.request("tools/call", { name: "agent_wait", arguments: { name: "x", timeout: "soon" } }))?.result;
      expect(r).toMatchObject({ isError: true });
    } finally {
      c.kill();
    }
  });
});
