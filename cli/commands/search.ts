// `a2a search`: ranked matches across what you may read (lib/search/; docs/PROTOCOL.md §20).
// Parse -> bus.search.find -> a table (or JSON); nothing found is exit 0 with a note on stderr,
// as recv says an empty inbox.

import type { Command } from "commander";
import { age, preview, table } from "../format";
import { err, json, out, parseCount } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  search: (p: Command) =>
    command(p, "search", {
      summary: "find messages, topic posts, slots and tasks by their words, best match first",
      description:
        'Search what you may read: your own mail (your inbox, not mail held from senders your policy refuses, and the messages you sent), every topic, every slot (its task and result) and every task (payload and result). QUERY is words that must all appear (AND), in any case; a word ending in * is a prefix (pars*); "words in double quotes" must appear in that order. A hyphenated word (e-mail, re-run) matches its parts in a row, so "e-mail" finds e-mail, E-Mail and "e mail"; non-ASCII words (Größe, café) work. Rows come best match first, ties newest first; the MATCH column is a snippet with the matched words marked «like this» (untrusted text: whatever its author wrote). Nothing found: no output, a note on stderr, exit 0. Bad query syntax (an unclosed quote, a * inside a word): exit 2. Marks nothing read.',
      examples: ['a2a search "schema change" --as bob', "a2a search 'pars*' --in topics,slots --since 2d", "a2a search e-mail --from alice --json | jq -r '.[].id'"],
      json: "print a JSON array of {kind, id, author, time, snippet}, best first ([] when nothing matches)",
    })
      .argument("<query>", 'words, prefixes (pars*) and "phrases"')
      .option("--as <name>", "who you are (default: $A2A_AGENT, else this session's name: see a2a whoami)")
      .option("--in <kinds>", "search only these, comma-separated: mail, topics, slots, tasks (default: all)")
      .option("--from <name>", "only what NAME wrote (mail and topics: the sender; slots: the slot's name; tasks: who holds it)")
      .option("--since <when>", "only what was written since: a duration back from now (2h, 7d), an ISO time or unix seconds")
      .option("--limit <n>", "at most N rows (default 20, at most 1000)")
      .action(action(async (c: Ctx, query: string, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        const rows = await c.bus.search.find(me, query, { in: o.in, from: o.from, since: o.since, limit: o.limit === undefined ? undefined : parseCount(o.limit, "--limit") });
        if (!rows.length && !c.json) return err(`a2a: nothing found for ${me}\n`);
        if (c.json) return out(json(rows));
        out(table(["KIND", "ID", "FROM", "AGE", "MATCH"], rows.map((r) => [r.kind, r.id, r.author ?? "-", age(r.time), preview(r.snippet, 200)])));
      })),
};
