import { distance } from "fastest-levenshtein";
import { type ErrorCode, ProvaelError } from "./errors.js";
import type { Attack, Defense, Policy, Suite } from "./types.js";

/** What a plugin object is; `provael --plugin` reads it to know which registry takes it. */
export type PluginKind = "attack" | "policy" | "suite" | "defense";

/**
 * The brand `define*` puts on a plugin. A global symbol, so a plugin that imports its own copy
 * of provael is still recognised by the copy that loads it.
 */
export const PLUGIN_KIND: unique symbol = Symbol.for("provael.plugin.kind") as never;

function brand<T extends object>(item: T, kind: PluginKind): T {
  Object.defineProperty(item, PLUGIN_KIND, { value: kind, enumerable: false });
  return item;
}

/** The kind a `define*` helper branded `value` with, or null for anything else. */
export function pluginKind(value: unknown): PluginKind | null {
  if (typeof value !== "object" || value === null) return null;
  const kind = (value as Record<symbol, unknown>)[PLUGIN_KIND];
  return kind === "attack" || kind === "policy" || kind === "suite" || kind === "defense"
    ? kind
    : null;
}

/**
 * Defines an attack: one typed object, checked at its definition and branded so that
 * `--plugin` can register it.
 *
 * @example
 * ```ts
 * import { defineAttack } from "provael";
 * import { z } from "zod";
 * export const shout = defineAttack({
 *   id: "shout", family: "instruction", role: "treatment", eai: "EAI01", access: "none",
 *   description: "the instruction in capitals", requires: {}, params: z.object({}).strict(),
 *   begin: () => ({ instruction: (text) => text.toUpperCase() }),
 * });
 * ```
 */
export function defineAttack<P>(attack: Attack<P>): Attack<P> {
  return brand(attack, "attack");
}

/**
 * Defines a defense: a safeguard placed in the episode loop (`kind` input, action or monitor),
 * checked at its definition and branded so that `--plugin` can register it.
 *
 * @example
 * ```ts
 * import { defineDefense } from "provael";
 * import { z } from "zod";
 * export const slow = defineDefense({
 *   id: "slow", kind: "action", description: "halves every commanded motion",
 *   requires: {}, params: z.object({}).strict(),
 *   begin: () => ({ actuate: (a) => a.map((v, i) => (i < 6 ? v / 2 : v)) }),
 * });
 * ```
 */
export function defineDefense<P>(defense: Defense<P>): Defense<P> {
  return brand(defense, "defense");
}

/**
 * Defines a policy (the system under test): capabilities and a `load` that returns an
 * instance with `reset`, `act` and `close`.
 *
 * @example
 * ```ts
 * import { definePolicy } from "provael";
 * export const still = definePolicy({
 *   id: "still", description: "never moves", suites: [], concurrent: true,
 *   capabilities: { cameras: [], readsState: true, readsContext: false, privileged: false,
 *     actionDim: 7, chunk: 1, differentiable: false, weights: false, stochastic: false,
 *     actionHead: "unknown" },
 *   load: async () => ({ capabilities: still.capabilities, reset() {},
 *     act: () => new Float32Array(7), close() {} }),
 * });
 * ```
 */
export function definePolicy(policy: Policy): Policy {
  return brand(policy, "policy");
}

/**
 * Defines a suite: tasks, default predicates and `open`, which returns an instance with
 * `reset`, `step`, `sceneDigest` and `close`. See examples/plugins/ for a complete one.
 */
export function defineSuite(suite: Suite): Suite {
  return brand(suite, "suite");
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

/** The PolicyOptions fields that have flags of their own: an `extra` key by that name is a slip. */
const OPTION_FLAGS: Record<string, string> = { path: "--policy-path", url: "--policy-url" };

/**
 * Refuses `extra` keys a policy does not read (it declares them in `options`), naming the ones
 * it does: `--policy-option path=DIR` would otherwise play the shipped weights without a word.
 */
export function checkPolicyOptions(policy: Policy, given: Readonly<Record<string, unknown>>): void {
  if (!policy.options) return;
  const known = policy.options;
  for (const key of Object.keys(given)) {
    if (known.includes(key)) continue;
    const flag = OPTION_FLAGS[key];
    const near = closest(key, known);
    throw new ProvaelError(
      "config/invalid",
      `policy '${policy.id}' has no option '${key}'` +
        (known.length > 0
          ? `; it reads ${known.map((k) => `'${k}'`).join(", ")}`
          : "; it reads none"),
      {
        details: { option: key, options: [...known] },
        hint: flag
          ? `pass it as ${flag} ${key === "path" ? "DIR" : "URL"}`
          : near.length > 0
            ? `did you mean ${near.map((k) => `--policy-option ${k}=…`).join(" or ")}?`
            : `drop --policy-option ${key}=…`,
      },
    );
  }
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

/**
 * A registry of plugins keyed by id, with helpful errors for unknown names: the built-ins it is
 * made with, then the plugins `register` adds (in the order they were loaded).
 */
export class Registry<T extends { id: string }> {
  private readonly byId: Map<string, T>;
  private readonly list: T[];

  constructor(
    readonly kind: string,
    items: readonly T[],
    private readonly listCommand: string,
    private readonly code: ErrorCode,
  ) {
    this.byId = new Map();
    this.list = [...items];
    for (const item of items) {
      if (this.byId.has(item.id)) throw new Error(`duplicate ${kind} id '${item.id}'`);
      this.byId.set(item.id, item);
    }
  }

  /**
   * Adds a plugin beside the built-ins. A plugin may not replace a built-in or another plugin:
   * two objects under one id would make a report's arm names ambiguous.
   */
  register(item: T): void {
    if (this.byId.has(item.id)) {
      throw new ProvaelError(
        "config/plugin",
        `a ${this.kind} with id '${item.id}' is already registered`,
        {
          details: { kind: this.kind, id: item.id },
          hint: `give the plugin's ${this.kind} another id (see \`${this.listCommand}\`)`,
        },
      );
    }
    this.byId.set(item.id, item);
    this.list.push(item);
  }

  get items(): readonly T[] {
    return this.list;
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
