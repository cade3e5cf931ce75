// Runs once before the suite: every test drives the compiled binary, so make sure it exists
// and is newer than every source file (a stale binary would test old code). A2A_BIN lets
// parallel work build and test separate binaries without overwriting each other.
import { join } from "node:path";
import { ensureBinary } from "./build";

ensureBinary(process.env.A2A_BIN || join(import.meta.dir, "..", "dist", "a2a"));
