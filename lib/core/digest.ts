// Random names and content hashes without importing node:crypto, whose load costs every CLI
// start-up ~10 ms in a compiled binary (the bundle hoists node built-ins to the top). Bun's
// global Web Crypto and CryptoHasher are already there.

import { hex } from "./utf8";

export function randomHex(bytes: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function hashHex(algorithm: "md5" | "sha1" | "sha256", text: string): string {
  return new Bun.CryptoHasher(algorithm).update(text).digest("hex");
}
