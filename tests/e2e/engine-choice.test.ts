// The engine is chosen once, when the store is opened, from --dir / A2A_DIR (lib/bus.ts): a
// path is the file engine; a postgres:// URL names the PostgreSQL engine. Whatever goes wrong
// with a URL is said in one line that never shows its password, leaving nothing behind.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { redact } from "../../lib/bus";
import { a2a, tempDir } from "../harness/run";

describe("choosing the engine", () => {
  test("redact drops a URL's password and password parameters, and leaves paths alone", () => {
    expect(redact("postgres://alice:s3cret@db.example:5432/bus?schema=team")).toBe("postgres://alice@db.example:5432/bus?schema=team");
    expect(redact("postgresql://alice@db/bus?password=s3cret&sslmode=require")).toBe("postgresql://alice@db/bus?sslmode=require");
    expect(redact("postgres://db/bus")).toBe("postgres://db/bus");
    expect(redact("/home/alice/.a2a")).toBe("/home/alice/.a2a");
    expect(redact("postgres://alice:s3cret@[bad")).not.toContain("s3cret");
    expect(redact("postgresql://alice@db/bus?sslmode=require&password=s3cret")).toBe("postgresql://alice@db/bus?sslmode=require");
  });

  // Passwords a URL parser reads as a port, path, query or fragment (base64 holds "/"): found by
  // the seam's review, where the first redact printed each of these whole.
  const ODD = ["postgres://alice:/s3cret@db.example/app", "postgres://alice:?s3cret@db.example/app", "postgres://alice:5#s3cret@db.example/app", "postgres://alice:1234/s3cret@db.example/app"];
  test("redact drops a password whatever characters it holds", () => {
    for (const url of ODD) expect(redact(url)).toBe("postgres://alice@db.example/app");
  });
  test("nor does the refusal print one", async () => {
    using cwd = tempDir();
    for (const url of ODD) {
      const r = await a2a(["--dir", url, "status"], { cwd: cwd.path });
      expect({ code: r.code, leaked: r.stderr.includes("s3cret") }).toEqual({ code: 2, leaked: false });
    }
  });

  for (const how of ["A2A_DIR", "--dir"] as const) {
    test(`a postgres:// store given by ${how} that cannot be reached is said in one line, exit 1, without its password, and nothing is made`, async () => {
      using cwd = tempDir();
      const url = "postgres://alice:s3cret@127.0.0.1:1/bus";
      const r = how === "A2A_DIR" ? await a2a(["status"], { env: { A2A_DIR: url }, cwd: cwd.path }) : await a2a(["--dir", url, "status"], { cwd: cwd.path });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^a2a: cannot reach PostgreSQL at 127\.0\.0\.1:1\/bus while listing slots \([^)\n]*\): check that the server runs and that --dir or A2A_DIR names it\n$/);
      expect(r.stderr).not.toContain("s3cret");
      expect(readdirSync(cwd.path)).toEqual([]);
    });
  }
});

// Issue 33: `--dir 'postgress://alice@host:5432/team'` published, exit 0, into a new
// ./postgress:/alice@host:5432/team/ under the cwd (mysql:// the same), and a relative A2A_DIR
// made a different store in every directory. Both are refused, exit 2, and nothing is made.
describe("a store that is neither a path a2a can use nor a URL it reads", () => {
  for (const url of ["postgress://alice:s3cret@db.example:5432/team", "mysql://alice@db.example/team", "POSTGRE://db/bus", "file:///tmp/x"]) {
    for (const how of ["--dir", "A2A_DIR"] as const) {
      test(`${url.split(":")[0]}:// by ${how}: exit 2 naming the schemes a2a reads, its password not shown, nothing made`, async () => {
        using cwd = tempDir();
        const args = ["publish", "schema", "create table t (x int);"];
        const r = how === "A2A_DIR" ? await a2a(args, { env: { A2A_DIR: url }, cwd: cwd.path }) : await a2a(["--dir", url, ...args], { cwd: cwd.path });
        expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
        const scheme = url.split(":")[0];
        expect(r.stderr).toBe(`a2a: ${how} names a ${scheme}:// URL, which a2a does not read: a store is a postgres:// (or postgresql://) URL or a directory path; correct the scheme (a directory of that name is ./${scheme}:/...)\n`);
        expect(readdirSync(cwd.path)).toEqual([]);
      });
    }
  }

  // The review of issue 33's fix: a postgres URL with one slash was a relative path, made as a
  // directory by --dir, and A2A_DIR's refusal printed its password twice.
  for (const url of ["postgres:/alice:s3cret@db.example/team", "postgresql:alice:s3cret@db.example/team", "POSTGRES:alice:s3cret@db/team"]) {
    for (const how of ["--dir", "A2A_DIR"] as const) {
      test(`${JSON.stringify(url.replace("s3cret", "…"))} by ${how}: a mistyped URL, exit 2, its password not shown, nothing made`, async () => {
        using cwd = tempDir();
        const args = ["publish", "schema", "x"];
        const r = how === "A2A_DIR" ? await a2a(args, { env: { A2A_DIR: url }, cwd: cwd.path }) : await a2a(["--dir", url, ...args], { cwd: cwd.path });
        expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
        const scheme = url.split(":")[0];
        expect(r.stderr).toBe(`a2a: ${how} names a ${scheme}: URL without its two slashes: write ${scheme}://USER@HOST:PORT/DB\n`);
        expect(readdirSync(cwd.path)).toEqual([]);
      });
    }
  }
  test("a relative A2A_DIR that looks like user:password@host is refused without the password", async () => {
    using cwd = tempDir();
    const r = await a2a(["publish", "x", "1"], { env: { A2A_DIR: "alice:s3cret@db/team" }, cwd: cwd.path });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("s3cret");
    expect(r.stderr).toContain('A2A_DIR="alice:***@db/team" is a relative path');
  });

  test("a relative A2A_DIR is refused, exit 2, naming the absolute path it would mean here; a relative --dir is one command's own and is used", async () => {
    using cwd = tempDir();
    const r = await a2a(["publish", "x", "1"], { env: { A2A_DIR: "team-bus" }, cwd: cwd.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`a2a: A2A_DIR="team-bus" is a relative path, which names a different store in every directory: set it to an absolute path (${cwd.path}/team-bus from here) or one starting with ~/\n`);
    expect(readdirSync(cwd.path)).toEqual([]);
    expect((await a2a(["--dir", "team-bus", "publish", "x", "1"], { cwd: cwd.path })).code).toBe(0);
    expect(readdirSync(cwd.path)).toEqual(["team-bus"]);
  });
});

// Issue 33: `?sslmode=bogus` was "unexpected failure ... please report this", exit 1.
test("an sslmode libpq does not know is a usage error naming the modes, exit 2, before any connection", async () => {
  using cwd = tempDir();
  const r = await a2a(["--dir", "postgres://alice:s3cret@127.0.0.1:1/bus?sslmode=bogus", "status"], { cwd: cwd.path });
  expect(r).toEqual({
    code: 2, stdout: "",
    stderr: 'a2a: sslmode="bogus" in postgres://alice@127.0.0.1:1/bus?sslmode=bogus is not an sslmode: use one of disable, allow, prefer, require, verify-ca, verify-full (verify-full checks the server\'s certificate and name), or leave it out\n',
  });
  expect(readdirSync(cwd.path)).toEqual([]);
});
