// Long-lived helper processes of the bench (waiters, publishers) spoken to in lines: the
// bench writes commands to a child's stdin and reads its stdout line by line. Every read has
// an upper bound, so a hung child fails its section instead of hanging the bench, and every
// child is killed by its pid when the bench is done with it (or dies).

import type { Subprocess } from "bun";

const live = new Set<Subprocess>();

// Kills every child still running (called on exit and on SIGINT/SIGTERM of the bench).
export function killAll(): void {
  for (const p of live) {
    try {
      p.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  live.clear();
}

// The line of a child's stderr that says what went wrong: an uncaught error prints the source
// lines around the throw first ("141 |   }"), then "NameError: message", then the stack.
export function errorLine(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /^([A-Z]\w*Error|error)\b.*: /.test(l)) ?? lines[lines.length - 1] ?? "";
}

export class Child {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private buf = "";
  private lines: string[] = [];
  private waiters: (() => void)[] = [];
  private ended = false;
  private errText = "";
  readonly label: string;

  constructor(cmd: string[], opts: { env?: Record<string, string | undefined>; label?: string } = {}) {
    this.label = opts.label ?? cmd.join(" ");
    this.proc = Bun.spawn({ cmd, env: opts.env as Record<string, string>, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    live.add(this.proc);
    this.proc.exited.then(() => live.delete(this.proc));
    void this.pump();
    void this.pumpErr();
  }

  private async pump(): Promise<void> {
    const dec = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      this.buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = this.buf.indexOf("\n")) >= 0) {
        this.lines.push(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
      }
      this.wake();
    }
    this.ended = true;
    this.wake();
  }

  private async pumpErr(): Promise<void> {
    const dec = new TextDecoder();
    for await (const chunk of this.proc.stderr) this.errText = (this.errText + dec.decode(chunk)).slice(-2000);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  // The next stdout line; throws if the child ends or `limitMs` passes first.
  async line(limitMs = 20_000): Promise<string> {
    const deadline = Date.now() + limitMs;
    while (this.lines.length === 0) {
      if (this.ended) throw new Error(`${this.label} ended unexpectedly${this.errText ? ": " + errorLine(this.errText) : ""}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.label}: no output within ${limitMs} ms${this.errText ? " (stderr: " + errorLine(this.errText) + ")" : ""}`);
      let t: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((res) => {
        this.waiters.push(res);
        t = setTimeout(res, left);
      });
      clearTimeout(t);
    }
    return this.lines.shift()!;
  }

  // The next line, split on spaces, checked to start with `word`.
  async expect(word: string, limitMs?: number): Promise<string[]> {
    const l = await this.line(limitMs);
    const parts = l.split(" ");
    if (parts[0] !== word) throw new Error(`${this.label}: expected "${word} ...", got ${JSON.stringify(l)}${this.errText ? " (stderr: " + errorLine(this.errText) + ")" : ""}`);
    return parts;
  }

  send(line: string): void {
    this.proc.stdin.write(line + "\n");
    this.proc.stdin.flush();
  }

  // Closes stdin (children exit on EOF), then kills after `graceMs`.
  async stop(graceMs = 3000): Promise<void> {
    try {
      this.proc.stdin.end();
    } catch {
      // already closed
    }
    const t = setTimeout(() => this.proc.kill("SIGKILL"), graceMs);
    await this.proc.exited;
    clearTimeout(t);
  }
}

// A reader of `stream` line by line: each call resolves with the next line (without its "\n");
// it rejects when the stream ends first.
export function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let buf = "";
  return async () => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const l = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return l;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`child ended; got ${JSON.stringify(buf)}`);
      buf += dec.decode(value, { stream: true });
    }
  };
}
