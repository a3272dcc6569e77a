/**
 * The worker-thread side of the pool: loads the suite and the policy once per setup and plays
 * the cells it is sent. Holds no state that could leak between cells beyond what an episode's
 * reset clears.
 */
import { loadPlugins } from "../config/plugins.js";
import { digestJson } from "../core/digest.js";
import type { PolicyInstance, SuiteInstance } from "../core/types.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import { type CellResult, type ExecutorSetup, playCell } from "./executor.js";
import type { Cell } from "./plan.js";

let loaded: { key: string; instance: SuiteInstance; policy: PolicyInstance } | null = null;

export default async function play(message: {
  setup: ExecutorSetup;
  cell: Cell;
}): Promise<CellResult> {
  // A worker thread has its own registries: the run's plugins must be registered here too.
  await loadPlugins(message.setup.plugins ?? []);
  const key = digestJson({ plan: message.setup.plan, options: message.setup.policyOptions });
  if (!loaded || loaded.key !== key) {
    if (loaded) {
      await loaded.instance.close();
      await loaded.policy.close();
    }
    const definition = policies.get(message.setup.plan.policy);
    const policy = await definition.load(message.setup.policyOptions);
    // The loaded instance knows its cameras (a served policy's come from its layout).
    const instance = await suites
      .get(message.setup.plan.suite)
      .open({ cameras: policy.capabilities.cameras });
    loaded = { key, instance, policy };
  }
  return playCell(message.setup, message.cell, loaded.instance, loaded.policy);
}
