import { distance } from "fastest-levenshtein";
import { type ErrorCode, ProvaelError } from "./errors.js";
import type { Attack, Policy, Suite } from "./types.js";

/** Identity helpers: they exist so a plugin is one typed object checked at its definition. */
export function defineAttack<P>(attack: Attack<P>): Attack<P> {
  return attack;
}
export function definePolicy(policy: Policy): Policy {
  return policy;
}
export function defineSuite(suite: Suite): Suite {
  return suite;
}

/** Valid names closest to `name`, best first (edit distance, then prefix match). */
export function closest(name: string, valid: readonly string[], max = 3): string[] {
  const lower = name.toLowerCase();
  return valid
    .map((v) => ({ v, d: distance(lower, v.toLowerCase()) - (v.startsWith(lower) ? 2 : 0) }))
    .filter(({ v, d }) => d <= Math.max(2, Math.floor(v.length / 2)))
    .sort((a, b) => a.d - b.d || (a.v < b.v ? -1 : 1))
    .slice(0, max)
    .map(({ v }) => v);
}

/** An error for an unknown name that says the closest valid names and the command listing all. */
export function unknownName(
  kind: string,
  name: string,
  valid: readonly string[],
  listCommand: string,
  code: ErrorCode,
  where = "",
): ProvaelError {
  const near = closest(name, valid);
  const suggestion =
    near.length > 0 ? ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)` : "";
  return new ProvaelError(code, `unknown ${kind} '${name}'${where}${suggestion}`, {
    details: { kind, name, closest: near },
    hint: `run \`${listCommand}\` to see every ${kind}`,
  });
}

/** A read-only registry of plugins keyed by id, with helpful errors for unknown names. */
export class Registry<T extends { id: string }> {
  private readonly byId: Map<string, T>;

  constructor(
    readonly kind: string,
    readonly items: readonly T[],
    private readonly listCommand: string,
    private readonly code: ErrorCode,
  ) {
    this.byId = new Map();
    for (const item of items) {
      if (this.byId.has(item.id)) throw new Error(`duplicate ${kind} id '${item.id}'`);
      this.byId.set(item.id, item);
    }
  }

  ids(): string[] {
    return this.items.map((i) => i.id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): T {
    const item = this.byId.get(id);
    if (!item) throw unknownName(this.kind, id, this.ids(), this.listCommand, this.code);
    return item;
  }
}
