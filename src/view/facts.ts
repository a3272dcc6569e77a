/**
 * What the viewer's pages need from the plugin registries, as data: the caveats' facts and each
 * built-in task's hazard zones. The server reads them live; the page that opens dropped files
 * (src/view/client/open.ts) cannot load the registries, so `npm run build` writes these facts of
 * the built-in plugins into its bundle (rolldown.config.ts).
 */
import { type CaveatFacts, caveatFacts } from "../report/caveats.js";
import { suites } from "../suites/index.js";
import type { ZonePayload } from "./payloads.js";

export interface PageFacts {
  caveats: CaveatFacts;
  /** Per suite and task: the hazard zones drawn under the top-down path. */
  zones: Record<string, Record<string, ZonePayload[]>>;
}

/** A task's hazard zones, or none when the suite or task is not registered here. */
export function zonesFor(suiteId: string, task: string): ZonePayload[] {
  return tasksOf(suiteId)
    .filter((t) => t.id === task)
    .flatMap((t) => t.hazard.zones ?? [])
    .map((z) => ({ id: z.id, label: z.label, min: z.min, max: z.max }));
}

/** A suite's tasks; none when it is not registered or cannot list them here (a remote suite). */
function tasksOf(suiteId: string) {
  if (!suites.has(suiteId)) return [];
  try {
    return suites.get(suiteId).tasks();
  } catch {
    return [];
  }
}

/** The facts of every registered suite and attack. */
export function pageFacts(): PageFacts {
  const zones: PageFacts["zones"] = {};
  for (const s of suites.items)
    zones[s.id] = Object.fromEntries(tasksOf(s.id).map((t) => [t.id, zonesFor(s.id, t.id)]));
  return { caveats: caveatFacts(), zones };
}
