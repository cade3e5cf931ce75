// The size rule every record is held to: A2A_MAX_BYTES (the Store's maxBytes), whatever the engine.

import type { Store } from "./config";
import { A2AError, arg, op, text } from "./errors";
import { utf8Length } from "./utf8";

// The UTF-8 size of `text`, or ETOOBIG when it is over the store's limit (nothing is written).
// `attachable`: the record can carry files (a direct message, a published or finished result),
// so the remedy is to attach the bytes; elsewhere (a chunk, a payload, a topic post) to store them
// and name the digest.
export function checkSize(store: Store, body: string, what: string, attachable = false): number {
  const bytes = utf8Length(body);
  if (bytes > store.maxBytes) {
    const fix = attachable
      ? text`hand the bytes over as a file with ${arg("attach", "FILE")} (any size) and keep the text short, or raise A2A_MAX_BYTES`
      : text`store the bytes with ${op("put", "FILE")} (any size) and send its sha256: digest instead, or raise A2A_MAX_BYTES`;
    throw new A2AError("ETOOBIG", [`${what} is ${bytes} bytes, over the ${store.maxBytes}-byte limit: `, ...fix], { data: { bytes, limit: store.maxBytes } });
  }
  return bytes;
}

