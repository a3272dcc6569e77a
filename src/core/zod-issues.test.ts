import { describe, expect, it } from "vitest";
import { z } from "zod";
import { allIssues, describeIssues, MAX_SHOWN_ISSUES } from "./zod-issues.js";

const schema = z.object({ a: z.number(), b: z.object({ c: z.string() }) }).strict();
const errorOf = (v: unknown) => {
  const r = schema.safeParse(v);
  if (r.success) throw new Error("valid");
  return r.error;
};

describe("describeIssues", () => {
  it("one issue: its field and message on one line", () => {
    expect(describeIssues(errorOf({ a: 1, b: { c: 2 } }))).toMatch(/^b\.c: [^\n]+$/);
  });

  it("several issues: the first on the first line, then every issue as zod prints them", () => {
    const text = describeIssues(errorOf({ a: "x", b: { c: 2 }, d: 1 }));
    const [head, ...rest] = text.split("\n");
    expect(head).toMatch(/^a: .*\(3 issues\)$/);
    expect(rest.join("\n")).toMatch(/→ at a[\s\S]*→ at b\.c/);
    expect(rest.join("\n")).toMatch(/Unrecognized key/);
  });

  it("names the whole value when the issue has no path, and caps what it lists", () => {
    expect(describeIssues(errorOf(3))).toMatch(/^\(root\): /);
    const many = z
      .array(z.string())
      .safeParse(Array.from({ length: MAX_SHOWN_ISSUES + 5 }, () => 1));
    if (many.success) throw new Error("valid");
    expect(allIssues(many.error)).toMatch(/… and 5 more$/);
  });
});
