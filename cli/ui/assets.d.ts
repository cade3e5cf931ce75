// The dashboard's page assets, imported as text (`with { type: "text" }`) and embedded in
// the binary by `bun build --compile`.
declare module "*/page.css" {
  const text: string;
  export default text;
}
declare module "*/page.js" {
  const text: string;
  export default text;
}
