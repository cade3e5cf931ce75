// cli/agents/toml.ts: tables out and a block in, every other byte of the file kept; what it
// refuses (a2a defined inline or by a dotted key, broken TOML) and that it is not fooled by
// strings, arrays and comments that look like table headers.
import { describe, expect, test } from "bun:test";
import { A2AError } from "../../lib/core/errors";
import { replaceTables, tableText, tomlHeader } from "../../cli/agents/toml";

const A2A = ["mcp_servers", "a2a"];
const BLOCK = '[mcp_servers.a2a]\ncommand = "/bin/a2a"\nargs = ["mcp"]\n';
// block null: remove only.
const edit = (text: string, block: string | null = BLOCK, path = A2A) => replaceTables("config.toml", text, path, block ?? undefined, "codex");

function refusal(text: string): string {
  try {
    edit(text);
  } catch (e) {
    expect(e).toBeInstanceOf(A2AError);
    expect((e as A2AError).code).toBe("EUSAGE");
    return (e as Error).message;
  }
  throw new Error("no refusal");
}

const USER = `# top comment
model = "o3" # why

[mcp_servers.docs]
command = "docs"
args = [
  "--flag", # [mcp_servers.a2a] in a comment
  "]",
]
note = """
[mcp_servers.a2a]
not a header: inside a string
"""

# about projects
[projects."/srv/app"]
trust_level = "trusted"
`;

describe("replaceTables", () => {
  test("appends after one blank line; removing restores the text byte for byte", () => {
    const added = edit(USER);
    expect(added).toBe(USER + "\n" + BLOCK);
    expect(Bun.TOML.parse(added)).toMatchObject({ mcp_servers: { a2a: { command: "/bin/a2a" }, docs: { args: ["--flag", "]"] } } });
    expect(edit(added, null)).toBe(USER);
    expect(edit("", BLOCK)).toBe(BLOCK);
    expect(edit(BLOCK, null)).toBe("");
    expect(edit('model = "o3"', BLOCK)).toBe('model = "o3"\n\n' + BLOCK); // no final newline: one is added
  });

  test("a string or comment that looks like a header is not one; nothing to remove leaves the text as it was", () => {
    expect(edit(USER, null)).toBe(USER);
  });

  test("replaces in place, with its subtables ([mcp_servers.a2a.env], quoted spellings) and only those", () => {
    const text = `a = 1\n\n[mcp_servers."a2a"]\ncommand = "old"\n\n[mcp_servers.a2a.env]\nX = "1"\n\n# the docs server\n[mcp_servers.a2a-docs]\ncommand = "d"\n`;
    expect(edit(text)).toBe(`a = 1\n\n${BLOCK}\n\n# the docs server\n[mcp_servers.a2a-docs]\ncommand = "d"\n`);
    expect(edit(text, null)).toBe(`a = 1\n\n# the docs server\n[mcp_servers.a2a-docs]\ncommand = "d"\n`);
    // Twice: the same text.
    expect(edit(edit(text))).toBe(edit(text));
    expect(tableText(text, [...A2A, "env"])).toBe('[mcp_servers.a2a.env]\nX = "1"\n');
    expect(tableText(text, ["nothing"])).toBeUndefined();
  });

  test("a key with dots and quotes (a hook trust key) is a table path of its own", () => {
    const key = '/home/u/.codex/hooks.json:stop:0:0';
    const block = `${tomlHeader(["hooks", "state", key])}\ntrusted_hash = "sha256:ab"\n`;
    expect(block.startsWith('[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]')).toBe(true);
    const text = edit(USER, block, ["hooks", "state", key]);
    expect((Bun.TOML.parse(text) as any).hooks.state[key]).toEqual({ trusted_hash: "sha256:ab" });
    expect(edit(text, block, ["hooks", "state", key])).toBe(text);
    expect(edit(text, null, ["hooks", "state", key])).toBe(USER);
    // [hooks.state] itself (Codex writes it empty) is not under the key's path: kept.
    expect(edit(`[hooks.state]\n\n${block}`, null, ["hooks", "state", key])).toBe("[hooks.state]\n");
  });

  test("a2a defined by a key or an inline table, or a parent defined as a value: refused, naming the line", () => {
    expect(refusal('[mcp_servers]\na2a = { command = "x" }\n')).toMatch(/^config\.toml line 2: mcp_servers\.a2a is defined here as a key, not as a \[mcp_servers\.a2a\] table: .*nothing was changed$/);
    expect(refusal('x = 1\nmcp_servers.a2a.command = "x"\n')).toMatch(/^config\.toml line 2: mcp_servers\.a2a is defined here as a key/);
    expect(refusal('mcp_servers = { docs = { command = "d" } }\n')).toMatch(/^config\.toml line 1: mcp_servers is defined here as a value \(an inline table\): write it as \[mcp_servers\] tables/);
    expect(refusal('[mcp_servers.a2a\n')).toMatch(/^config\.toml is not valid TOML \(.*\): fix it \(or move it aside\), then run a2a setup codex again; nothing was changed$/);
    expect(refusal('[mcp_servers.a2a]\nx = 1\n[mcp_servers.a2a]\ny = 2\n')).toMatch(/not valid TOML/);
  });

  test("a value spanning lines with brackets is one statement: a key after it is still seen", () => {
    expect(refusal('arr = [\n  [1, 2],\n  { a = "]" },\n]\nmcp_servers.a2a.x = 1\n')).toMatch(/line 5: mcp_servers\.a2a is defined here as a key/);
  });
});
