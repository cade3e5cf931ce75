// Text assets imported with `with { type: "text" }` and embedded in the binary by `bun build
// --compile`: the dashboard's page, and the plugin `a2a setup opencode` writes (cli/agents).
declare module "*/page.css" {
  const text: string;
  export default text;
}
declare module "*/page.js" {
  const text: string;
  export default text;
}
declare module "*/opencode-plugin.asset.js" {
  const text: string;
  export default text;
}
declare module "*/primer.md" {
  const text: string;
  export default text;
}
