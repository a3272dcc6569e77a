/**
 * One player of a page run: loads the policy and opens the suite once, then plays the cells it
 * is given, as a Node worker thread does for `provael attack` (browser-safe; each Web Worker of
 * the page holds one).
 */
import { isRendered } from "../core/lazy-images.js";
import type { Image, Observation, PolicyInstance, SuiteInstance } from "../core/types.js";
import { policies } from "../policies/index.js";
import type { Cell, PlanSpec } from "../runner/plan.js";
import { type CellResult, type ExecutorSetup, playCell } from "../runner/play-cell.js";
import { suites } from "../suites/index.js";
import type { PageProbe } from "./session.js";

/** What the policy saw at one step, the cameras it read (copied: the suite reuses its buffers). */
export interface SeenFrame {
  step: number;
  images: Record<string, Image>;
}

export class Player {
  private constructor(
    private readonly policy: PolicyInstance,
    private readonly instance: SuiteInstance,
  ) {}

  /** Loads the plan's policy and opens its suite with the cameras the policy reads. */
  static async open(plan: PlanSpec): Promise<Player> {
    const policy = await policies.get(plan.policy).load({
      ...plan.policy_options,
      extra: { ...((plan.policy_options.extra ?? {}) as Record<string, unknown>) },
    });
    try {
      const instance = await suites.get(plan.suite).open({ cameras: policy.capabilities.cameras });
      return new Player(policy, instance);
    } catch (e) {
      await policy.close();
      throw e;
    }
  }

  /** The probe `provael attack` makes (runner/executor.ts probePolicy). */
  probe(): PageProbe {
    return {
      digest: this.policy.digest ?? null,
      capabilities: {
        ...this.policy.capabilities,
        queryable: typeof this.policy.query === "function",
      },
    };
  }

  /**
   * Plays one cell; `onFrame` sees each step's images the policy read. A step's observation is
   * seen before the policy acts on it, when its cameras are not rendered yet (they render when
   * the policy reads them, and reading one here would render a camera the run does not), so
   * each step's frame is sent at the next step, before the suite renders into its buffers again.
   */
  play(setup: ExecutorSetup, cell: Cell, onFrame?: (f: SeenFrame) => void): Promise<CellResult> {
    let previous: { step: number; seen: Observation } | null = null;
    return playCell(
      setup,
      cell,
      this.instance,
      this.policy,
      onFrame
        ? (step, seen) => {
            if (previous) {
              const images: Record<string, Image> = {};
              // Only cameras rendered for the policy: reading another would render it.
              for (const k of Object.keys(previous.seen.images)) {
                if (!isRendered(previous.seen.images, k)) continue;
                const im = previous.seen.images[k] as Image;
                images[k] = { ...im, data: im.data.slice() };
              }
              if (Object.keys(images).length > 0) onFrame({ step: previous.step, images });
            }
            previous = { step, seen };
          }
        : undefined,
    );
  }

  async close(): Promise<void> {
    await this.instance.close();
    await this.policy.close();
  }
}
