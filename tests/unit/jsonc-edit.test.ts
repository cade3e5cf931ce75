// cli/agents/jsonc-edit.ts: a JSONC file changed member by member: the result holds the wanted
// value, the user's comments and layout stay, and taking a2a's members out again gives the
// original text back byte for byte.
import { describe, expect, test } from "bun:test";
import { stripJsonComments } from "../../cli/agents/edit";
import { editJsonc } from "../../cli/agents/jsonc-edit";

const parse = (t: string) => JSON.parse(stripJsonComments(t));

// What a2a setup adds: a server and a hook group appended to an event's list.
function withA2A(v: Record<string, any>): Record<string, any> {
  const group = { hooks: [{ type: "command", command: "/x/a2a hook stop --agent gemini", timeout: 10000 }] };
  return { ...v, mcpServers: { ...(v.mcpServers ?? {}), a2a: { command: "/x/a2a", args: ["mcp"] } }, hooks: { ...(v.hooks ?? {}), AfterAgent: [...(v.hooks?.AfterAgent ?? []), group] } };
}

const FILES = {
  "comments everywhere": `{
  // a line comment
  "ui": { "theme": "GitHub" }, // after a member
  /* a block */
  "mcpServers": {
    "other": { "command": "true" } /* the last member's */
  },
  "hooks": {
    "AfterAgent": [
      { "hooks": [{ "type": "command", "command": "notify-send done" }] } // mine
    ]
  }
}
`,
  "four-space indent, no final newline": '{\n    "general": {\n        "vimMode": true\n    }\n}',
  "tabs": '{\n\t"ui": {\n\t\t"theme": "GitHub"\n\t}\n}\n',
  "one line": '{"ui": {"theme": "GitHub"}, "mcpServers": {}}',
  "empty object": "{}\n",
  "empty with a comment": "{\n  // nothing yet\n}\n",
  "trailing commas": '{\n  "mcpServers": {\n    "other": { "command": "true" },\n  },\n  "hooks": {},\n}\n',
  "trailing commas, one line": '{"mcpServers": {"other": {"command": "true"},}, "hooks": {"AfterAgent": [1,]},}',
};

describe("editJsonc", () => {
  for (const [name, text] of Object.entries(FILES)) {
    test(`${name}: setup's value, every comment kept; removing it gives the text back`, () => {
      const before = parse(text);
      const after = editJsonc(text, withA2A(before));
      expect(parse(after)).toEqual(withA2A(before));
      for (const c of text.match(/\/\/.*|\/\*.*?\*\//g) ?? []) expect(after).toContain(c);
      expect(editJsonc(after, before)).toBe(text);
    });
  }

  test("items inserted and deleted in the middle of a list, values replaced, a member taken out of the middle", () => {
    const text = '{\n  "a": [1, 2, 3], // nums\n  "b": [\n    "x",\n    "y"\n  ],\n  "c": true,\n  "d": null\n}\n';
    const want = { a: [1, 3, 4], b: ["x", "new", "y"], c: { on: true }, d: null };
    const got = editJsonc(text, { ...want });
    expect(parse(got)).toEqual(want);
    expect(got).toContain("// nums");
    const dropped = editJsonc(text, { a: [1, 2, 3], b: ["x", "y"], d: null });
    expect(dropped).toBe('{\n  "a": [1, 2, 3], // nums\n  "b": [\n    "x",\n    "y"\n  ],\n  "d": null\n}\n');
  });

  test("the wanted value in the same text is the same text", () => {
    const text = FILES["comments everywhere"];
    expect(editJsonc(text, parse(text))).toBe(text);
  });
});
