import { type Ctx, type Outcome, skip } from "./common";
export async function mcp(_ctx: Ctx): Promise<Outcome> {
  return skip("not written yet");
}
