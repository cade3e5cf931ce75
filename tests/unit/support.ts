// Small helpers shared by the unit tests.
import { expect } from "bun:test";
import { A2AError } from "../../lib/core/errors";

// The A2AError `f` throws; fails the test when it throws nothing or something else.
export function refusal(f: () => unknown): A2AError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(A2AError);
    return e as A2AError;
  }
  throw new Error("expected a refusal, got none");
}

// `encoded` (one line of JSON plus "\n") with `patch` applied to its object; a key patched to
// undefined is removed. Key order is kept, so only the patched fields differ.
export function variant(encoded: string, patch: Record<string, unknown>): string {
  const o: Record<string, unknown> = JSON.parse(encoded);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete o[k];
    else o[k] = v;
  }
  return JSON.stringify(o) + "\n";
}
