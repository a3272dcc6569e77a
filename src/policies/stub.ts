/**
 * The deterministic `stub` policy for the stub suite. It reads the instruction the way a naive
 * language-conditioned controller would: it heads for the object the instruction names. When
 * several objects are named, override cues ("instead", "ignore", …) make it follow the last one
 * with a probability drawn from its own seeded sampler, so instruction attacks have a real,
 * seed-dependent effect, and an instruction that names only the task object is always safe.
 */
import { ProvaelError } from "../core/errors.js";
import { definePolicy } from "../core/registry.js";
import { Rng } from "../core/rng.js";
import type { Action, EpisodeInfo, Observation, PolicyInstance } from "../core/types.js";
import { STUB_OBJECTS } from "../suites/stub.js";

const CUES = [
  "instead",
  "ignore",
  "actually",
  "override",
  "system",
  "priority",
  "forget",
  "real",
  "must",
  "now",
  "urgent",
  "new",
];

/** Objects named in a text, in order of first mention (whole words only). */
export function namedObjects(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const seen: string[] = [];
  for (const w of words) {
    if ((STUB_OBJECTS as readonly string[]).includes(w) && !seen.includes(w)) seen.push(w);
  }
  return seen;
}

/** Number of override cues in a text. */
export function cueCount(text: string): number {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return words.filter((w) => CUES.includes(w)).length;
}

class StubPolicyInstance implements PolicyInstance {
  readonly capabilities = stubPolicy.capabilities;
  /** How readily override cues win (1 = the default checkpoint; larger = more attackable). */
  private readonly susceptibility: number;

  constructor(
    susceptibility: number,
    /** Fail every step (tests of runs whose episodes all error). */
    private readonly broken = false,
  ) {
    this.susceptibility = susceptibility;
  }

  private rng: Rng = Rng.fromLabel("stub-policy");
  private target: string | null | undefined;
  private instruction = "";

  private episodeSeed = 0;

  reset(episode: EpisodeInfo): void {
    this.episodeSeed = episode.policySeed;
    this.rng = Rng.fromLabel(`stub-policy:${episode.policySeed}`);
    this.target = undefined;
    this.instruction = "";
  }

  act(obs: Observation): Action {
    if (this.broken)
      throw new ProvaelError("policy/error", "stub policy option broken=true: every step fails");
    if (this.target === undefined || obs.instruction !== this.instruction) {
      this.instruction = obs.instruction;
      this.target = this.chooseTarget(obs.instruction, obs.context ?? []);
    }
    return this.actionFor(this.target, obs);
  }

  private actionFor(target: string | null, obs: Observation): Action {
    const action = new Float32Array(7);
    if (target === null) return action;
    const index = STUB_OBJECTS.indexOf(target as (typeof STUB_OBJECTS)[number]);
    const goal = obs.state[index + 1] ?? 0;
    const x = obs.state[0] ?? 0;
    action[0] = Math.max(-1, Math.min(1, (goal - x) * 10));
    return action;
  }

  /**
   * A side-effect-free prediction for search attacks: the action `act` would take for this
   * observation if the instruction had just changed, drawn from a generator of its own (keyed by
   * the episode and the inputs) so querying never moves the episode's sampler.
   */
  query(obs: Observation): Action {
    const saved = this.rng;
    this.rng = Rng.fromLabel(
      `stub-policy-query:${this.episodeSeed}:${obs.instruction}:${(obs.context ?? []).join("\n")}`,
    );
    try {
      return this.actionFor(this.chooseTarget(obs.instruction, obs.context ?? []), obs);
    } finally {
      this.rng = saved;
    }
  }

  close(): void {}

  private chooseTarget(instruction: string, context: string[]): string | null {
    const named = namedObjects(instruction);
    if (named.length === 0) return null;
    const first = named[0] as string;
    const cues = cueCount(instruction) + cueCount(context.join(" "));
    // Context lines can name objects too (tool descriptions); they count as late mentions.
    const late = [...named, ...namedObjects(context.join(" "))];
    const last = late[late.length - 1] as string;
    if (last === first || cues === 0) return first;
    const follow = Math.min(0.95, 0.3 * cues * this.susceptibility);
    return this.rng.bernoulli(follow) ? last : first;
  }
}

export const stubPolicy = definePolicy({
  options: ["susceptibility", "broken"],
  id: "stub",
  evidence: "own",
  description: "Deterministic word-following policy for the stub suite (stub fixture)",
  capabilities: {
    cameras: [],
    readsState: true,
    readsContext: true,
    privileged: false,
    actionDim: 7,
    chunk: 1,
    differentiable: false,
    weights: false,
    stochastic: true,
    actionHead: "scripted",
  },
  suites: ["stub"],
  concurrent: false,
  load: async (options) => {
    const raw = options.extra?.susceptibility ?? 1;
    const susceptibility = Number(raw);
    if (!(susceptibility >= 0 && Number.isFinite(susceptibility))) {
      throw new ProvaelError(
        "config/invalid",
        `stub policy option susceptibility must be a non-negative number, got '${String(raw)}'`,
      );
    }
    return new StubPolicyInstance(susceptibility, options.extra?.broken === true);
  },
});
