// MCP server (issue 3): not built yet.
import { A2AError } from "../../lib/errors";
export async function runMcpServer(_dir?: string): Promise<void> {
  throw new A2AError("EUSAGE", "the MCP server is not built yet: use the CLI commands");
}
