// The files an apply_patch call would write, read the way the agent that runs it reads the patch:
// a header a2a does not see is an edit the PreToolUse hook lets through unchecked.
//
//   Codex (codex-rs/apply-patch/src/parser.rs): the text is trimmed and split into lines (a
//   trailing \r dropped); a file header is a line that, TRIMMED, starts with "*** Add File: ",
//   "*** Delete File: " or "*** Update File: " (a space after the colon), the path being the
//   rest; "*** Move to: " counts only on the line right after an Update header and untrimmed.
//   An Add's content is its "+" lines; an Update's chunks run to the next line starting "*".
//   opencode (packages/opencode/src/patch/index.ts): lines split on \n; a header is a line
//   STARTING with "*** Add File:", "*** Delete File:" or "*** Update File:" (no space needed),
//   the path being the rest trimmed (an empty one is no header); "*** Move to:" likewise, right
//   after an Update header.
//
// Where an agent would refuse the patch as a whole (a line where a header belongs that is none),
// the walk goes on looking: a name too many only denies a patch that would not have run.

type Header = { kind: "add" | "delete" | "update"; path: string };

const KINDS = [
  ["add", "*** Add File:"],
  ["delete", "*** Delete File:"],
  ["update", "*** Update File:"],
] as const;

const codexHeader = (line: string): Header | undefined => {
  const t = line.trim();
  for (const [kind, marker] of KINDS) if (t.startsWith(marker + " ") && t.length > marker.length + 1) return { kind, path: t.slice(marker.length + 1) };
  return undefined;
};

const opencodeHeader = (line: string): Header | undefined => {
  for (const [kind, marker] of KINDS) {
    if (!line.startsWith(marker)) continue;
    const path = line.slice(marker.length).trim();
    return path ? { kind, path } : undefined;
  }
  return undefined;
};

// Codex's apply_patch.
export function codexPatchFiles(patch: string): string[] {
  const lines = patch.trim().split("\n").map((l) => l.replace(/\r$/, ""));
  const out = new Set<string>();
  for (let i = 0; i < lines.length; ) {
    const h = codexHeader(lines[i++]);
    if (!h) continue;
    out.add(h.path);
    if (h.kind === "add") while (i < lines.length && lines[i].startsWith("+")) i++;
    if (h.kind !== "update") continue;
    if (i < lines.length && lines[i].startsWith("*** Move to: ")) out.add(lines[i++].slice("*** Move to: ".length));
    while (i < lines.length && !lines[i].startsWith("*")) i++;
  }
  return [...out].filter(Boolean);
}

// opencode's apply_patch (and patch): every header line counts, as its parser skips what it
// does not know and ends an Add's or an Update's body at the next line starting "***".
export function opencodePatchFiles(patch: string): string[] {
  const lines = patch.split("\n");
  const out = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const h = opencodeHeader(lines[i]);
    if (!h) continue;
    out.add(h.path);
    if (h.kind === "update" && lines[i + 1]?.startsWith("*** Move to:")) {
      const to = lines[++i].slice("*** Move to:".length).trim();
      if (to) out.add(to);
    }
  }
  return [...out];
}
