// A list of texts as one parameter that costs no round trip of its own: a PostgreSQL array
// literal ('{"a","b"}'), written `= any(${textArray(xs)}::text[])` in a statement. An array
// value as a parameter makes Bun describe the statement in a round trip before it runs it
// (a2a's connections prepare nothing: lib/pg/engine.ts), where a text parameter goes with the
// statement. Each element is quoted, with `"` and `\` escaped, so any text (a name, an id, a
// path with commas or braces) is one element; the server parses it, never as SQL.
export const textArray = (xs: readonly string[]): string => `{${xs.map((x) => `"${x.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
