/**
 * The built-in plugins' facts the page needs (caveats, hazard zones). `npm run build` replaces
 * this module in the bundle with the facts read from the registries (rolldown.config.ts); the
 * empty value here is only what the type check sees.
 */
import type { PageFacts } from "../../facts.js";

export const FACTS: PageFacts = {
  caveats: { blindTasks: {}, attacks: [] },
  zones: {},
  arms: {},
  defenses: {},
};
