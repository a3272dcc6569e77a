/**
 * How a zod validation failure reads in a ProvaelError: the first bad field and its message on
 * the first line (what a hint and a test can rely on), then, when there are more, every issue in
 * zod's own `prettifyError` format, so nobody fixes one field only to meet the next.
 */
import { prettifyError, type z } from "zod";

/** Issues listed at most; a file broken everywhere would otherwise print megabytes. */
export const MAX_SHOWN_ISSUES = 20;

/** The first issue's dotted path (`root` when it is the whole value) and message. */
export function firstIssue(error: z.ZodError, root = "(root)"): { field: string; message: string } {
  const issue = error.issues[0];
  return {
    field: issue && issue.path.length > 0 ? issue.path.map(String).join(".") : root,
    message: issue?.message ?? "invalid",
  };
}

/** Every issue (up to MAX_SHOWN_ISSUES, then how many more), as zod prints them. */
export function allIssues(error: z.ZodError): string {
  const shown = prettifyError({ issues: error.issues.slice(0, MAX_SHOWN_ISSUES) } as z.ZodError);
  const more = error.issues.length - MAX_SHOWN_ISSUES;
  return more > 0 ? `${shown}\n  … and ${more} more` : shown;
}

/**
 * `field: message` of the first issue, followed by every issue when there is more than one.
 *
 * @example describeIssues(schema.safeParse(raw).error) // "criteria.max: Too big: …"
 */
export function describeIssues(error: z.ZodError, root = "(root)"): string {
  const { field, message } = firstIssue(error, root);
  const head = `${field}: ${message}`;
  return error.issues.length > 1
    ? `${head} (${error.issues.length} issues)\n${allIssues(error)}`
    : head;
}
