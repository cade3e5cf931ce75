// Runs once before the suite: the end-to-end tests drive the compiled binary, so make sure it
// exists and is newer than every source file (a stale binary would test old code). A2A_BIN
// lets parallel work build and test separate binaries without overwriting each other.
import { ensureBinary } from "./build";
import { BIN } from "./harness/run";

ensureBinary(BIN);
