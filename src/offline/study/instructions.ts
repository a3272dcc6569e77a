/**
 * Instruction attacks applied open-loop: the attack (or its matched control) is begun as the
 * runner begins it for a cell (same seeded stream: attack, task, seed, repeat 0, with the
 * dataset episode index as the seed) and only its instruction rewrite is taken. An attack that
 * would change anything else (images, actions, the scene) cannot be replayed on recorded frames
 * and is refused.
 */
import { attackRng } from "../../attacks/control.js";
import { attacks } from "../../attacks/index.js";
import { ProvaelError } from "../../core/errors.js";
import type { PolicyInstance, TaskSpec } from "../../core/types.js";
import { beginArm, cellId } from "../../kernel/index.js";

export { attackRng };

/** The text an instruction arm sends for one dataset episode. */
export async function instructionAttackTextFor(
  arm: string,
  task: TaskSpec,
  benign: string,
  episode: number,
  params: Record<string, Record<string, unknown>>,
  policy: PolicyInstance,
): Promise<string> {
  const attack = attacks.get(arm);
  // The cell the runner would play: the dataset episode index as the seed, repeat 0. Recorded
  // frames come from no suite Provael can open or query, so the arm's oracle grants nothing.
  const hooks = await beginArm(
    { id: cellId(task.id, arm, episode, 0), task: task.id, arm, seed: episode, repeat: 0 },
    {
      attack,
      attackParams: params,
      task,
      suite: {
        id: "offline",
        capabilities: { cameras: [], stateDim: 0, sceneEditing: false, physics: false },
        actionSpace: { dim: policy.capabilities.actionDim, low: [], high: [], names: [] },
      },
      policy,
      oracle: {
        budget: 0,
        used: 0,
        query: async () => {
          throw new ProvaelError("attack/budget-exhausted", "the offline study grants no queries");
        },
      },
    },
  );
  const other = (["perceive", "actuate", "scene"] as const).filter((k) => hooks[k] !== undefined);
  if (!hooks.instruction || other.length > 0) {
    throw new ProvaelError(
      "config/invalid",
      `'${arm}' (${attack.family}) ${hooks.instruction ? `also changes ${other.join(", ")}` : "does not rewrite the instruction"}: only instruction attacks and their controls replay on recorded frames`,
      { hint: "use an attack of the instruction family (roleplay, goal_substitution, paraphrase)" },
    );
  }
  return hooks.instruction(benign);
}
