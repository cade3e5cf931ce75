// What the MCP harness checks of a tool result beyond its outputSchema (tests/harness/mcp.ts).

// The fields of `value` its JSON Schema does not declare (the list lets a result gain fields;
// a2a's own results must declare every one: cli/mcp/outputs.ts).
export function undeclared(schema: any, value: unknown, at: string): string[] {
  if (!schema || typeof schema !== "object" || value === null || typeof value !== "object") return [];
  if (schema.anyOf) return schema.anyOf.flatMap((s: any) => (s.type === (Array.isArray(value) ? "array" : "object") ? undeclared(s, value, at) : []));
  if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(schema.items, v, `${at}[${i}]`));
  return Object.entries(value).flatMap(([k, v]) => {
    const s = schema.properties?.[k] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
    return s ? undeclared(s, v, `${at}.${k}`) : [`${at}.${k}`];
  });
}
