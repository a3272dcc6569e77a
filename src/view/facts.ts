/**
 * What the viewer's pages need from the plugin registries, as data: the caveats' facts and each
 * built-in task's hazard zones. The server reads them live; the page that opens dropped files
 * (src/view/client/open.ts) cannot load the registries, so `npm run build` writes these facts of
 * the built-in plugins into its bundle (rolldown.config.ts).
 */
import { attacks } from "../attacks/index.js";
import { defenses } from "../defenses/index.js";
import { armFacts, type ReportArm } from "../report/arms.js";
import { type CaveatFacts, caveatFacts } from "../report/caveats.js";
import { suites } from "../suites/index.js";
import type { ZonePayload } from "./payloads.js";

export interface PageFacts {
  caveats: CaveatFacts;
  /** Per suite and task: the hazard zones drawn under the top-down path. */
  zones: Record<string, Record<string, ZonePayload[]>>;
  /** Each attack's report facts and default params (a run in progress's report is built in the page). */
  arms: Record<string, Omit<ReportArm, "params"> & { defaults: Record<string, unknown> }>;
  /** Each defense's default params. */
  defenses: Record<string, Record<string, unknown>>;
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
  const arms: PageFacts["arms"] = {};
  for (const a of attacks.items)
    arms[a.id] = { ...armFacts(a), defaults: a.params.parse({}) as Record<string, unknown> };
  const defaults: PageFacts["defenses"] = {};
  for (const d of defenses.items) defaults[d.id] = d.params.parse({}) as Record<string, unknown>;
  return { caveats: caveatFacts(), zones, arms, defenses: defaults };
}
