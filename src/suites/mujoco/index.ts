/** The MuJoCo suites (reach, tabletop) and the parts they are built from. */
export {
  ArmController,
  type ControllerSettings,
  checkAction,
  DEFAULT_CONTROLLER,
} from "./controller.js";
export { Engine, mujocoModule } from "./engine.js";
export type { MujocoSuiteOptions } from "./instance.js";
export { OBJECT_WORDS, type ObjectWords, TABLE_Z } from "./objects.js";
export { createReachSuite, reachSuite } from "./reach.js";
export { MUJOCO_SCENE_ROLES, type Placement, SCENES_PER_TASK, SceneSource } from "./scenes.js";
export { createTabletopSuite, TABLETOP_TASKS, tabletopSuite } from "./tabletop.js";
export { DEFAULT_RENDER, MujocoWorld, type RenderSettings } from "./world.js";
