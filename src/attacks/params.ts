/**
 * The params an arm plays with. A treatment plays with the values the run gives it over its
 * schema's defaults. A control's size is its matched attack's: it takes the attack's value of
 * each of its `sharedParams` (given or default, the defaults being the same by construction), so
 * `--attack-param freeze.length=[5,5]` sets the hold of `random_freeze` too; a value the run
 * gives the control itself wins (recorded in the plan like any other).
 */
import { ProvaelError } from "../core/errors.js";
import type { Attack } from "../core/types.js";
import { describeIssues } from "../core/zod-issues.js";

export type GivenParams = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** The values `given` holds for `attack`, its matched attack's shared ones first. */
export function givenParams(
  attack: Pick<Attack<unknown>, "id" | "matches" | "sharedParams">,
  given: GivenParams,
): Record<string, unknown> {
  const own = given[attack.id] ?? {};
  const matched = attack.matches === undefined ? undefined : given[attack.matches];
  if (!matched || !attack.sharedParams) return { ...own };
  const inherited: Record<string, unknown> = {};
  for (const key of attack.sharedParams) if (key in matched) inherited[key] = matched[key];
  return { ...inherited, ...own };
}

/** The parsed params of an arm; a value that does not fit its schema is a `config/invalid`. */
export function resolveParams<P>(attack: Attack<P>, given: GivenParams): P {
  const values = givenParams(attack, given);
  const parsed = attack.params.safeParse(values);
  if (parsed.success) return parsed.data;
  throw new ProvaelError(
    "config/invalid",
    `the params of '${attack.id}' are not valid: ${describeIssues(parsed.error, "(params)")}`,
    {
      details: { given: values },
      hint:
        attack.matches !== undefined
          ? `'${attack.id}' takes ${(attack.sharedParams ?? []).join(", ") || "no params"} from '${attack.matches}'; see \`provael list-attacks --json\``
          : "see the parameters in `provael list-attacks --json`",
    },
  );
}
