// UTF-8 without Buffer. The first touch of Bun's Buffer global costs a process ~0.3 M
// instructions, and its from/allocUnsafe/toString as much again: ~5% of `a2a status`, for
// what TextEncoder, TextDecoder and Uint8Array do for a third of that. So the code every
// command runs (records, reads, writes, stdout) uses these instead; tests/e2e/startup.test.ts
// checks that the hot commands never touch Buffer.

const encoder = new TextEncoder();
// ignoreBOM: a leading byte-order mark is data, as Buffer keeps it.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

export const encodeUtf8 = (text: string): Uint8Array => encoder.encode(text);

// Invalid sequences become U+FFFD, as Buffer's toString("utf8") makes them.
export const decodeUtf8 = (bytes: Uint8Array): string => decoder.decode(bytes);

// Buffer.byteLength(text, "utf8"): a lone surrogate counts as U+FFFD's 3 bytes, as it is written.
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
  return s;
}
