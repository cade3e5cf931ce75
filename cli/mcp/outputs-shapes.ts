// The pieces every output schema is made of (outputs.ts says what a result is).

import { z } from "zod";

export const S = z.string();
export const N = z.number();
export const B = z.boolean();
export const SN = S.nullable();
export const NN = N.nullable();
export const Ss = z.array(S);

// A tool's result: `ok` always, every other field where its path puts it.
export const result = (shape: z.ZodRawShape) => z.object({ ok: B, unread: S, ...shape }).partial().required({ ok: true });
export const said = { message: S }; // a line for the model
export const notOk = { error: S, message: S }; // an expected outcome: ok false, why, and what to do

// The fields of a wait that ended without its answer (tools/tasks.ts notYet, tools/waits.ts).
export const waited = { waited_secs: N, remaining_secs: N };

