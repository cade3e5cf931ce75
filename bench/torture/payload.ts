// Self-checking payloads: every result and chunk the torture suite writes carries its own
// checksum, so a reader can tell a whole payload from a torn, mixed or mangled one even when
// the record around it passes a2a's own checks (a torn read that happens to parse, a chunk
// from another run, a byte changed in transit).
//
//   ~TAG~BODY~CRC~     CRC = crc32(TAG + "~" + BODY) in 8 hex digits; no "~" in TAG or BODY
//
// Bodies mix ASCII, JSON metacharacters, control characters, newlines and multi-byte UTF-8
// (2, 3 and 4 bytes) so the JSON encoding of records is exercised, not just plain letters.
// No NUL: payloads travel through argv, which cannot carry it.

const ALPHABET = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
  " ", "\n", "\t", "\r", '"', "\\", "{", "}", "[", "]", ",", ":", "'", "\u0001", "\u001f", "\u007f",
  "é", "ß", "Ω", "日", "本", "€", "\u2028", "😀", "🦀",
];

export type Rand = () => number;

// mulberry32: small, seedable, good enough to pick kill points and payloads reproducibly.
export function rng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
export const between = (r: Rand, lo: number, hi: number) => lo + r() * (hi - lo);

const crc = (s: string) => (Bun.hash.crc32(s) >>> 0).toString(16).padStart(8, "0");

// Wraps `body` (no "~") as a whole payload tagged `tag` (no "~").
export const seal = (tag: string, body: string) => `~${tag}~${body}~${crc(tag + "~" + body)}~`;

// The tag and body of a whole payload, or undefined when the text is not one.
export function unseal(text: string): { tag: string; body: string } | undefined {
  const m = /^~([^~]*)~([^~]*)~([0-9a-f]{8})~$/.exec(text);
  if (!m || crc(m[1] + "~" + m[2]) !== m[3]) return undefined;
  return { tag: m[1], body: m[2] };
}

// A payload tagged `tag` with a random body of 0..maxChars characters.
export function makePayload(r: Rand, tag: string, maxChars: number): string {
  const n = Math.floor(r() * (maxChars + 1));
  let body = "";
  for (let i = 0; i < n; i++) body += pick(r, ALPHABET);
  return seal(tag, body);
}

// The tag of a whole payload, or undefined when the text is not one (torn, mixed, foreign).
export const payloadTag = (text: string) => unseal(text)?.tag;

export const payloadCrc = (text: string) => crc(text);
