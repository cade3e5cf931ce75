// lib/core/similar.ts: which existing name a typo most likely meant.
import { describe, expect, test } from "bun:test";
import { closest } from "../../lib/core/similar";

describe("closest", () => {
  test("one slip: a missing, extra, wrong or swapped character", () => {
    const names = ["researcher", "reviewer", "indexer"];
    expect(closest("researchr", names)).toBe("researcher");
    expect(closest("researcherx", names)).toBe("researcher");
    expect(closest("reveiwer", names)).toBe("reviewer");
    expect(closest("revieweer", names)).toBe("reviewer");
    expect(closest("Indexer", names)).toBe("indexer");
  });

  test("nothing close, an exact match, or a short name too far: no suggestion", () => {
    expect(closest("builder", ["researcher", "reviewer"])).toBeUndefined();
    expect(closest("reviewer", ["reviewer", "reviewers"])).toBeUndefined();
    expect(closest("ab", ["xy", "abcd"])).toBeUndefined();
    expect(closest("ab", ["ac"])).toBeUndefined(); // every short name is one edit from another
    expect(closest("abc", ["abd"])).toBe("abd");
    expect(closest("x", [])).toBeUndefined();
  });

  test("a numbered series is not a typo: own1 is not own7", () => {
    expect(closest("own1", ["own7", "own12"])).toBeUndefined();
    expect(closest("worker-1", ["worker-12", "worker-2", "worker-1x"])).toBe("worker-1x");
  });

  test("the nearest wins; ties go to the first listed", () => {
    expect(closest("abcdef", ["abcdxx", "abcdex"])).toBe("abcdex");
  });
});
