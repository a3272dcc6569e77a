/**
 * The release verdict under an acceptance protocol, as the manifest records it (`acceptance`)
 * and `provael verdict --json` prints it.
 */
import { z } from "zod";

const status = z.enum(["pass", "fail", "incomplete"]);

export const verdictSchema = z
  .object({
    protocol: z.string(),
    protocol_version: z.number(),
    verdict: status,
    criteria: z.array(z.object({ criterion: z.string(), status, reason: z.string() }).strict()),
  })
  .strict();

export type VerdictFile = z.infer<typeof verdictSchema>;
