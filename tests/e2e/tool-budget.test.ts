// What a2a's tool lists cost a model (issue 37): each set's tools/list, as a real SDK client
// reads it from the compiled binary, stays within its budget (cli/mcp/toolsets.ts LIST_BUDGET),
// and the compaction that keeps it small (cli/mcp/compact.ts) loses nothing a client acts on:
// every tool of the set is there with its arguments and required ones, hints that differ from
// the protocol's defaults are kept, and no schema carries the SDK's draft-07 marker.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ALIASES, LIST_BUDGET, MODEL_BUDGET, modelView, selectTools } from "../../cli/mcp/toolsets";
import { connect } from "../harness/mcp";
import { testStore } from "../harness/run";

setDefaultTimeout(60_000);

describe("tool lists", () => {
  for (const set of Object.keys(LIST_BUDGET)) {
    test(`--tools ${set}: every tool of the set, within ${LIST_BUDGET[set]} bytes, ${MODEL_BUDGET[set]} of what a model is shown`, async () => {
      using d = testStore();
      const s = await connect(d.path, {}, { tools: set });
      try {
        const { tools } = await s.client.listTools();
        const bytes = JSON.stringify(tools).length;
        expect(tools.map((t) => t.name).sort()).toEqual([...selectTools(set)].sort());
        expect(bytes).toBeLessThanOrEqual(LIST_BUDGET[set]);
        // What a model is shown of them (name, description, input schema): its own, tighter budget.
        expect(JSON.stringify(tools.map(modelView)).length).toBeLessThanOrEqual(MODEL_BUDGET[set]);
        for (const t of tools) {
          expect(t.description!.length).toBeGreaterThan(30);
          expect(t.inputSchema.type).toBe("object");
          expect(JSON.stringify(t.inputSchema)).not.toContain("$schema");
          expect((t as any).execution).toBeUndefined();
          // Every tool says what its results are, with nothing a client need not be told.
          expect(t.outputSchema?.type).toBe("object");
          expect(JSON.stringify(t.outputSchema)).not.toMatch(/"\$schema"|"additionalProperties":false|"propertyNames"|"description"/);
        }
      } finally {
        await s.close();
      }
    });
  }

  test("compaction keeps what a client acts on: required arguments, defaults, and every hint that is not the protocol's default", async () => {
    using d = testStore();
    const s = await connect(d.path, {}, { tools: "all" });
    try {
      const by = Object.fromEntries((await s.client.listTools()).tools.map((t) => [t.name, t]));
      expect(by.agent_wait.inputSchema.required).toEqual(["name"]);
      expect((by.agent_wait.inputSchema.properties as any).timeout).toMatchObject({ type: "number", minimum: 0, default: 300 });
      // Read-only and non-destructive tools say so; a destructive one says nothing (the default: destructive).
      expect(by.agent_status.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      expect(by.agent_clear.annotations).toEqual({ idempotentHint: true });
      expect(by.agent_publish.annotations).toBeUndefined();
      for (const t of Object.values(by)) expect(t.annotations?.openWorldHint).not.toBe(true);
      expect(Object.keys(LIST_BUDGET).every((k) => k in ALIASES)).toBe(true);
    } finally {
      await s.close();
    }
  });
});
