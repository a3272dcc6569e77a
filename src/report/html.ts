/**
 * `report.html`: the run for people who would rather look than read. One self-contained file
 * (inline CSS and SVG, images as data URIs, no script, no network) built from report.json and,
 * when present, trajectories.jsonl and the optional frames/ folder of the run directory.
 *
 * Frames convention: `frames/<cell>/<camera>-<step>.png`, one PNG per saved camera frame of the
 * episode whose cell id names the folder. Frames are optional; the page says when there are none.
 */
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { assertInside, framesDir } from "../rundir/files.js";
import { type FrameScene, frameSceneSchema } from "../rundir/schema/index.js";
import type { ArmReport, Rate, Report, ReportEpisode } from "./build.js";
import { caveats, type Via } from "./caveats.js";
import {
  armsChartSvg,
  heatmapSvg,
  type PathSeries,
  type PlotObject,
  type PlotZone,
  pathPlotSvg,
} from "./charts.js";
import {
  CALIBRATION_COLUMNS,
  calibrationCells,
  displayOrder,
  formatP,
  NO_PINNED_PAIR,
  pct,
  taskFieldTables,
} from "./format.js";
import { firedText, floorExceedsAttacks, headlineNotes } from "./headline.js";
import { escapeHtml, htmlPage, ROLE_COLOURS } from "./html-style.js";
import { MITIGATION_HEADER, mitigationNotes, mitigationRows } from "./mitigation-text.js";
import { showcase } from "./showcase.js";
import { readShowcaseClip, type ShowcaseClip } from "./showcase-clip.js";

export { showcase } from "./showcase.js";

/** The mitigation table of a compare run (the same rows and sentences as report.md). */
function mitigationSection(report: Report): string {
  if (!report.mitigation) return "";
  const head = MITIGATION_HEADER.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const rows = mitigationRows(report)
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`)
    .join("\n");
  const notes = mitigationNotes(report)
    .map((n) => `<li>${escapeHtml(n)}</li>`)
    .join("");
  return `<h2>Mitigation: undefended vs defended</h2>
<table><thead><tr>${head}</tr></thead><tbody>
${rows}
</tbody></table>
<ul class="small">${notes}</ul>`;
}

import { RUN_FILES } from "../rundir/files.js";
import { armLevel } from "./sarif.js";
import { eaiRisk } from "./sarif-rules.js";
import { isSignificant, procedureName, ruleText } from "./significance.js";

/** Frames larger than this are skipped, and the page stops adding frames past the total. */
const MAX_FRAME_BYTES = 2 * 1024 * 1024;
const MAX_FRAMES_TOTAL_BYTES = 12 * 1024 * 1024;
const FRAMES_PER_EPISODE = 6;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface TrajectoryPoint {
  step: number;
  pose: number[] | null;
  unsafe: boolean | null;
}

/** Reads the steps of the given cells from trajectories.jsonl, skipping every other line fast. */
async function readTrajectories(
  path: string,
  cells: string[],
): Promise<Map<string, TrajectoryPoint[]>> {
  const out = new Map<string, TrajectoryPoint[]>(cells.map((c) => [c, []]));
  if (!existsSync(path) || cells.length === 0) return out;
  const lines = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!cells.some((c) => line.includes(c))) continue;
    try {
      const v = JSON.parse(line) as {
        cell?: unknown;
        step?: unknown;
        pose?: unknown;
        unsafe?: unknown;
      };
      if (typeof v.cell !== "string" || typeof v.step !== "number") continue;
      const list = out.get(v.cell);
      if (!list) continue;
      list.push({
        step: v.step,
        pose:
          Array.isArray(v.pose) && v.pose.every((x) => typeof x === "number")
            ? (v.pose as number[])
            : null,
        unsafe: typeof v.unsafe === "boolean" ? v.unsafe : null,
      });
    } catch {
      // A torn or foreign line is not ours to render; the digest check is `provael verify`'s job.
    }
  }
  for (const list of out.values()) list.sort((a, b) => a.step - b.step);
  return out;
}

const isVec3 = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length >= 2 && v.every((x) => typeof x === "number" && Number.isFinite(x));

/**
 * Keep-out zones of a task, if the report records any (as `zones` beside a task's calibration
 * entry, or under a top-level `hazards[task].zones`); current reports do not, so this is empty.
 */
export function zonesOf(report: Report, task: string): PlotZone[] {
  const loose = report as unknown as {
    hazards?: Record<string, { zones?: unknown }>;
    calibration?: Record<string, { zones?: unknown }>;
  };
  const raw = loose.calibration?.[task]?.zones ?? loose.hazards?.[task]?.zones;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((z: unknown) => {
    const o = z as { id?: unknown; label?: unknown; min?: unknown; max?: unknown };
    if (!isVec3(o.min) || !isVec3(o.max)) return [];
    return [
      {
        id: typeof o.id === "string" ? o.id : "zone",
        label: typeof o.label === "string" ? o.label : "",
        min: [o.min[0] as number, o.min[1] as number] as [number, number],
        max: [o.max[0] as number, o.max[1] as number] as [number, number],
      },
    ];
  });
}

/**
 * The scene of a showcased episode (objects, roles, keep-out zones), or null when the frame
 * replay did not write one (served or bridged runs, suites without object poses) or the file
 * does not read as one.
 */
function sceneOf(
  runDir: string,
  cell: string,
): { objects: PlotObject[]; zones: PlotZone[] } | null {
  const file = join(framesDir(runDir, cell), "scene.json");
  if (!existsSync(file)) return null;
  assertInside(runDir, file);
  let parsed: FrameScene;
  try {
    const r = frameSceneSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!r.success || r.data.cell !== cell) return null;
    parsed = r.data;
  } catch {
    return null;
  }
  const hazards = new Set(parsed.hazard_objects);
  const targets = new Set(parsed.task_objects);
  const objects = Object.entries(parsed.objects).map(([name, o]) => ({
    name,
    start: [o.start[0], o.start[1]] as [number, number],
    end: o.end ? ([o.end[0], o.end[1]] as [number, number]) : null,
    role: hazards.has(name)
      ? ("hazard" as const)
      : targets.has(name)
        ? ("target" as const)
        : ("other" as const),
  }));
  const zones = parsed.zones.map((zn) => ({
    id: zn.id,
    label: zn.label,
    min: [zn.min[0], zn.min[1]] as [number, number],
    max: [zn.max[0], zn.max[1]] as [number, number],
  }));
  return { objects: objects as PlotObject[], zones };
}

interface Frame {
  camera: string;
  step: number;
  dataUri: string;
}

/** Frames of one episode from frames/<cell>/, evenly spread over the steps saved. */
function readFrames(
  runDir: string,
  cell: string,
  budget: { left: number },
  steps?: number[],
): Frame[] {
  // The cell id comes from the report: it must be a cell id, and the folder inside the run.
  const dir = framesDir(runDir, cell);
  if (!existsSync(dir)) return [];
  const found: Array<{ camera: string; step: number; file: string }> = [];
  for (const name of readdirSync(dir).sort()) {
    const m = /^(.+)-(\d+)\.png$/.exec(name);
    if (m) found.push({ camera: m[1] as string, step: Number(m[2]), file: join(dir, name) });
  }
  // Every camera the replay saved (agent view first), the same steps of each.
  const cameras = [...new Set(found.map((f) => f.camera))].sort((a, b) =>
    a === "agentview" ? -1 : b === "agentview" ? 1 : a.localeCompare(b),
  );
  const chosen = cameras.flatMap((camera) => {
    const own = found.filter((f) => f.camera === camera).sort((a, b) => a.step - b.step);
    return steps !== undefined
      ? own.filter((f) => steps.includes(f.step))
      : own.length <= FRAMES_PER_EPISODE
        ? own
        : Array.from(
            { length: FRAMES_PER_EPISODE },
            (_, i) => own[Math.round((i * (own.length - 1)) / (FRAMES_PER_EPISODE - 1))],
          ).filter((f): f is (typeof own)[number] => f !== undefined);
  });
  const frames: Frame[] = [];
  for (const f of chosen) {
    assertInside(runDir, f.file);
    const size = statSync(f.file).size;
    if (size > MAX_FRAME_BYTES || size > budget.left) continue;
    const bytes = readFileSync(f.file);
    if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) continue;
    budget.left -= size;
    frames.push({
      camera: f.camera,
      step: f.step,
      dataUri: `data:image/png;base64,${bytes.toString("base64")}`,
    });
  }
  return frames;
}

function metric(cls: string, label: string, r: Rate, note: string): string {
  return `<div class="card metric ${cls}"><div class="label">${escapeHtml(label)}</div><div class="value">${pct(r.rate)}</div><div class="detail">${r.successes}/${r.n}${r.interval ? ` · CI ${pct(r.interval.low).replace("%", "")}–${pct(r.interval.high)}` : ""}</div><div class="detail">${escapeHtml(note)}</div></div>`;
}

/** One sentence a reader can take away, built only from the numbers. */
function takeaway(report: Report): string {
  const alpha = report.tests.significance_level;
  const treatments = displayOrder(report).filter((a) => report.arms[a]?.role === "treatment");
  if (treatments.length === 0) return "This run has no treatment arm, so it measures no attack.";
  const floor =
    report.tests.baseline_arm === null
      ? null
      : (report.arms[report.tests.baseline_arm]?.unsafe ?? null);
  const levels = treatments.map((a) => armLevel(report.arms[a] as ArmReport, floor, alpha).level);
  const errors = levels.filter((l) => l === "error").length;
  const ctl = report.summary.control_unsafe;
  const ctlText =
    ctl.n === 0
      ? "The run has no controls to compare with."
      : `Harmless changes of the same size (controls) were unsafe in ${pct(ctl.rate)} of episodes.`;
  // A control as unsafe as its attack means any change of that size does it, not the attack.
  const rivals = treatments.flatMap((t) => {
    const attack = report.arms[t]?.unsafe.rate ?? null;
    return report.run.arms
      .filter((c) => report.arms[c]?.role === "control" && report.arms[c]?.matches === t)
      .filter((c) => {
        const r = report.arms[c]?.unsafe.rate ?? null;
        return attack !== null && attack > 0 && r !== null && r >= attack;
      })
      .map(
        (c) =>
          `${c} (${pct(report.arms[c]?.unsafe.rate ?? null)}, control for ${t} at ${pct(attack)})`,
      );
  });
  const rivalText =
    rivals.length === 0
      ? ""
      : ` But ${rivals.length === 1 ? "a matched control was" : "matched controls were"} at least as unsafe as the attack: ${rivals.join("; ")}, so a harmless change of that size does as much.`;
  // Below the floor, no control comparison means anything: say where the unsafe episodes came from.
  const [floorNote] = floorExceedsAttacks(report) ? headlineNotes(report) : [];
  if (floorNote)
    return `${errors} of ${treatments.length} attack arm(s) drove the policy into unsafe states clearly more often than its benign floor. ${floorNote}`;
  if (floor === null) {
    return `No baseline arm ran, so no attack can be compared with the policy's benign behaviour. ${ctlText}${rivalText}`;
  }
  return `${errors} of ${treatments.length} attack arm(s) drove the policy into unsafe states clearly more often than its benign floor of ${pct(floor.rate)} (significant under the declared rule: one-sided exact McNemar on pinned pairs, ${procedureName(report.summary.significance?.multiplicity ?? "holm")}-adjusted). ${ctlText}${rivalText}`;
}

/** A rate as a table cell: the percentage, then counts and interval in small type. */
function rateCell(r: Rate): string {
  if (r.rate === null || r.interval === null) return `N/A <div class="small muted">0 judged</div>`;
  return `<strong>${pct(r.rate)}</strong><div class="small muted">${r.successes}/${r.n} · ${pct(r.interval.low).replace("%", "")}–${pct(r.interval.high)}</div>`;
}

/** The arms' rates split by the benchmark's task fields (LIBERO-Plus); empty when none. */
function taskFieldSection(report: Report): string {
  const tables = taskFieldTables(report);
  if (tables.length === 0) return "";
  return `<h2>Per task field</h2>
<p class="small muted">The benchmark's own description of each task (<code>run.bridge.task_fields</code>); episodes whose task lacks the field are in no row. Rates count as the arms table does, with 95% Wilson intervals.</p>
${tables
  .map(
    (t) => `<h3>${escapeHtml(t.title)}</h3>
<table><thead><tr>${t.header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>
${t.rows.map((r) => `<tr><td>${escapeHtml(r.value)}</td>${r.rates.map((x) => `<td>${rateCell(x)}</td>`).join("")}</tr>`).join("\n")}
</tbody></table>`,
  )
  .join("\n")}`;
}

/** Escaped text with its `code` spans set as code. */
const codeSpans = (escaped: string) => escaped.replace(/`([^`]+)`/g, "<code>$1</code>");

/** A p-value as a table cell, in the format every surface uses. */
const pCell = (p: number | null) => escapeHtml(formatP(p));

/** On a control's row: its matched attack tested against it, by the declared rule. */
function vsAttackCell(a: ArmReport): string {
  const v = a.vs_attack;
  if (v === undefined) return "";
  if (v === null)
    return `<div class="small muted">attack ${escapeHtml(a.matches ?? "?")} not in this run</div>`;
  // No pinned cell judged in both arms: there is no test to call significant or not.
  if (v.primary_p === null)
    return `<div class="small muted wrap">attack vs control: N/A, ${NO_PINNED_PAIR}</div>`;
  return `<div class="small muted wrap">attack vs control: p ${pCell(v.primary_p)}${v.discordant ? `, b:c ${v.discordant[0]}:${v.discordant[1]}` : ""}; adjusted ${pCell(v.adjusted_p)}, ${v.significant === true ? "significant" : "not significant"}</div>`;
}

function armsTable(report: Report): string {
  const alpha = report.tests.significance_level;
  const floor =
    report.tests.baseline_arm === null
      ? null
      : (report.arms[report.tests.baseline_arm]?.unsafe ?? null);
  const rows = displayOrder(report).map((name) => {
    const a = report.arms[name] as ArmReport;
    const na = a.episodes - a.not_applicable === 0;
    const level = a.role === "treatment" ? armLevel(a, floor, alpha) : null;
    const notes = [
      a.not_delivered > 0 ? `${a.not_delivered} not delivered` : null,
      a.errors > 0 ? `${a.errors} errored` : null,
      a.unjudged > 0 ? `${a.unjudged} unjudged` : null,
      na ? `N/A: ${a.not_applicable_reason ?? "requirements unmet"}` : null,
      !na && Object.keys(a.fired).length > 0 ? `fired: ${firedText(a)}` : null,
    ].filter((x): x is string => x !== null);
    const risk =
      a.eai === null
        ? "no EAI tag"
        : `<span title="${escapeHtml(eaiRisk(a.eai).short)}">${escapeHtml(a.eai)}</span>`;
    return `<tr class="${a.role}">
<td>${a.role === "control" ? `↳ ${escapeHtml(name)}<div class="small muted">control for ${escapeHtml(a.matches ?? "?")}</div>${vsAttackCell(a)}` : `<strong>${escapeHtml(name)}</strong> <span class="badge ${a.role}">${a.role}</span>`}${notes.length > 0 ? `<div class="small warn wrap">${escapeHtml(notes.join(", "))}</div>` : ""}</td>
<td>${escapeHtml(a.family)}<div class="small muted">${risk}</div></td>
<td class="num">${na ? "N/A" : rateCell(a.unsafe)}</td>
<td class="num">${na ? "N/A" : rateCell(a.task_success)}</td>
<td class="num">${a.vs_baseline?.discordant ? `${pCell(a.vs_baseline.primary_p)}<div class="small muted">b:c ${a.vs_baseline.discordant[0]}:${a.vs_baseline.discordant[1]}</div>` : "—"}</td>
<td class="num">${pCell(a.vs_baseline?.adjusted_p ?? null)}${a.role === "treatment" ? `<div class="small muted">${isSignificant(a) ? "significant" : "not significant"}</div>` : ""}${a.vs_baseline?.bh_q == null ? "" : `<div class="small muted">BH q ${pCell(a.vs_baseline.bh_q)}</div>`}</td>
<td>${level ? `<span class="badge ${level.level === "none" ? "note" : level.level}" title="${escapeHtml(level.reason)}">${level.level}</span>` : ""}</td>
</tr>`;
  });
  return `<table>
<thead><tr><th>arm</th><th>family · EAI</th><th class="num">unsafe (95% Wilson)</th><th class="num">task success</th><th class="num">one-sided p</th><th class="num">adjusted p</th><th>SARIF</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
}

async function trajectorySection(report: Report, runDir: string): Promise<string> {
  const { attacked, twin } = showcase(report);
  if (attacked === null) {
    return `<p class="muted">No attacked episode to show: this run has no treatment arm with a judged episode.</p>`;
  }
  const cells = [attacked.cell, ...(twin ? [twin.cell] : [])];
  const trajPath = join(runDir, RUN_FILES.trajectories);
  const traj = await readTrajectories(trajPath, cells);
  const series: PathSeries[] = [];
  const toSeries = (e: ReportEpisode, label: string, colour: string) => {
    const steps = traj.get(e.cell) ?? [];
    if (steps.length === 0) return;
    series.push({
      label,
      colour,
      points: steps.map((s) =>
        s.pose && s.pose.length >= 2
          ? [s.pose[0] as number, s.pose[1] as number]
          : s.pose && s.pose.length === 1
            ? [s.pose[0] as number, 0]
            : null,
      ),
      unsafe: steps.map((s) => s.unsafe === true),
    });
  };
  if (twin) toSeries(twin, `benign twin (${twin.arm})`, ROLE_COLOURS.baseline);
  toSeries(attacked, `attacked (${attacked.arm})`, ROLE_COLOURS.treatment);
  const scene = sceneOf(runDir, attacked.cell);
  const recorded = zonesOf(report, attacked.task);
  const zones = recorded.length > 0 ? recorded : (scene?.zones ?? []);
  const objects = scene?.objects ?? [];
  const verdict = (e: ReportEpisode) =>
    e.unsafe === true
      ? `<span class="badge error">unsafe from step ${e.first_unsafe_step ?? "?"}</span> <span class="small muted">${e.unsafe_steps} of ${e.steps} steps unsafe</span>`
      : e.unsafe === false
        ? `<span class="badge ok">safe</span> <span class="small muted">${e.judged_steps} steps judged</span>`
        : `<span class="badge note">unjudged</span>`;
  const episodeBlock = (e: ReportEpisode, label: string, colour: string) =>
    `<div class="episode"><div><span class="dot" style="background:${colour}"></span><strong>${escapeHtml(label)}</strong> <span class="muted">(${escapeHtml(e.arm)})</span> ${e.task_success === true ? `<span class="small muted">· task done</span>` : e.task_success === false ? `<span class="small muted">· task not done</span>` : ""}</div><blockquote>${escapeHtml(e.instruction.received ?? e.instruction.original)}</blockquote><div>${verdict(e)}</div></div>`;
  const facts = `<p class="small">Task <code>${escapeHtml(attacked.task)}</code>, seed ${attacked.seed}, scene ${attacked.scene}. ${twin ? "Both episodes start from the same scene (a pinned pair)." : "No benign twin: the run has no baseline arm."}</p>
${twin ? episodeBlock(twin, "Benign twin", ROLE_COLOURS.baseline) : ""}
${episodeBlock(attacked, "Attacked", ROLE_COLOURS.treatment)}`;
  if (!existsSync(trajPath)) {
    return `${facts}<p class="callout">No trajectories.jsonl in the run directory, so the paths cannot be drawn.</p>`;
  }
  if (series.length === 0 || series.every((s) => s.points.every((p) => p === null))) {
    return `${facts}<p class="callout">The suite recorded no end-effector pose for these episodes, so the paths cannot be drawn.</p>`;
  }
  const plot = pathPlotSvg(series, zones, objects);
  const notes = [
    plot.oneDimensional
      ? "This suite reports a one-dimensional position, so the position is plotted against the step instead of a top-down view."
      : "Top-down view of the end effector (x, y in metres).",
    zones.length === 0
      ? "This report records no keep-out zones, so none are drawn; the red cross marks the first step the predicate judged unsafe."
      : "Red boxes are the keep-out zones of the task; the red cross marks the first unsafe step.",
    "Open circle: start; filled square: end.",
    ...(objects.length > 0 && !plot.oneDimensional
      ? [
          "Objects at the start of the episode: hazards as red triangles, the object the task names in blue; a dashed line leads to where an object the attacked episode moved ended up.",
        ]
      : []),
    ...(series.some((x) => x.points.some((p) => p === null))
      ? ["Gaps are steps where the suite reported no end-effector pose (unjudged steps)."]
      : []),
  ];
  return `<div class="pair"><figure class="card">${plot.svg}</figure><div>${facts}<p class="small muted">${notes.join(" ")}</p></div></div>`;
}

function framesSection(report: Report, runDir: string): string {
  const { attacked, twin } = showcase(report);
  const framesDir = join(runDir, "frames");
  if (!existsSync(framesDir)) {
    return `<p class="muted small">No camera frames: this run directory has no <code>frames/</code> folder. When a run saves frames as <code>frames/&lt;cell&gt;/&lt;camera&gt;-&lt;step&gt;.png</code>, sample frames of the attacked episode and its benign twin appear here.</p>`;
  }
  if (attacked === null) return `<p class="muted small">No attacked episode to show frames of.</p>`;
  const budget = { left: MAX_FRAMES_TOTAL_BYTES };
  const frames = readFrames(runDir, attacked.cell, budget);
  if (frames.length === 0) {
    return `<p class="muted small">No usable frames for the attacked episode <code>${escapeHtml(attacked.cell)}</code> under <code>frames/</code>.</p>`;
  }
  const twinFrames = twin
    ? readFrames(
        runDir,
        twin.cell,
        budget,
        frames.map((f) => f.step),
      )
    : [];
  // One row per camera, so the agent view and the wrist view of a step line up.
  const strip = (fs: Frame[], label: string) =>
    `<h3>${escapeHtml(label)}</h3>${[...new Set(fs.map((f) => f.camera))]
      .map(
        (camera) =>
          `<div class="frames">${fs
            .filter((f) => f.camera === camera)
            .map(
              (f) =>
                `<figure><img src="${f.dataUri}" alt="${escapeHtml(`${f.camera} step ${f.step}`)}"><figcaption>${escapeHtml(f.camera)} · step ${f.step}</figcaption></figure>`,
            )
            .join("")}</div>`,
      )
      .join("")}`;
  return `${twinFrames.length > 0 && twin ? strip(twinFrames, `Benign twin (${twin.arm})`) : ""}${strip(frames, `Attacked (${attacked.arm})`)}`;
}

/** The clip of the pair, or why there is none (never a silent gap). */
function clipSection(report: Report, clip: ShowcaseClip): string {
  if (clip.kind === "none")
    return `<p class="muted small" id="showcase-clip-missing">No clip of the pair: ${escapeHtml(clip.reason)}.</p>`;
  const { attacked, twin } = showcase(report);
  const info = clip.info;
  const rows = `top: the attacked episode (${escapeHtml(attacked?.arm ?? "?")})${twin ? `, below it the benign twin (${escapeHtml(twin.arm)})` : ""}`;
  const pace = `${info.frames} frames at ${info.fps} fps, ${info.every === 1 ? "one per step" : `one every ${info.every} steps`}${info.source === "saved-frames" ? ", from the frames the run saved (each held until the next)" : ""}`;
  const moments = info.moments.map((m) => {
    const who = m.cell === info.attacked ? "attacked" : "benign twin";
    const at = m.seconds.toFixed(1);
    return `${who}: ${escapeHtml(m.fired.join(", ") || "the predicate")} fired at step ${m.first_unsafe_step}, <a class="moment" href="${escapeHtml(clip.href)}#t=${at}">${at} s</a> into the clip`;
  });
  const mark = info.labels
    ? "a red border and a label mark the predicate's moment"
    : "a red border marks the predicate's moment (no font was found for labels)";
  return `<figure class="card clip"><video id="showcase-clip" src="${escapeHtml(clip.href)}" width="${info.width}" height="${info.height}" controls muted loop playsinline preload="metadata" data-frames="${info.frames}" data-fps="${info.fps}" data-every="${info.every}"></video>
<figcaption>${rows}; ${pace}; ${mark}. ${moments.length > 0 ? `${moments.join("; ")}.` : "No predicate fired in either episode."} The clip is <code>${escapeHtml(clip.href)}</code> beside this page.</figcaption></figure>`;
}

const EXTRA_CSS = `
.frames { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 8px; margin-bottom: 8px; }
.frames img { width: 100%; image-rendering: pixelated; border-radius: 6px; border: 1px solid var(--line); }
.chart { overflow-x: auto; }
.chart svg { max-width: 100%; height: auto; }
.legend-row { display: flex; gap: 16px; font-size: 13px; color: var(--muted); margin: 6px 0 10px; flex-wrap: wrap; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 5px; vertical-align: -1px; }
td .small { white-space: nowrap; }
/* Sentences (an N/A reason, the test against a control) wrap: unwrapped, one N/A reason widened
   a 45-arm table to 1,481 px and the page scrolled sideways. */
td .small.wrap { white-space: normal; }
td .warn { color: var(--warn); }
.pair { display: grid; grid-template-columns: minmax(0, auto) minmax(280px, 1fr); gap: 16px; align-items: start; }
.pair > figure svg { max-width: 100%; height: auto; }
.episode { margin: 10px 0 14px; }
.episode blockquote { margin: 6px 0; padding: 6px 10px; background: #fff; border: 1px solid var(--line); border-radius: 6px; font-style: italic; }
@media (max-width: 900px) { .pair { grid-template-columns: 1fr; } }
.takeaway { font-size: 17px; margin: 14px 0 18px; }
.clip video { max-width: 100%; height: auto; display: block; background: #181818; border-radius: 6px; }
`;

/**
 * Renders report.html for the run in `runDir`. Async because vega renders SVG asynchronously.
 * `options.clip` is the clip the writer placed beside the page (src/report/showcase-clip.ts);
 * without it, the run directory's own clip when it shows this report's pair.
 *
 * @example writeFileSync(join(dir, RUN_FILES.html), await renderHtml(report, dir));
 */
export async function renderHtml(
  report: Report,
  runDir: string,
  /** `via`: what made the run, which words the caveats' fixes (report/caveat-list.ts). */
  options: { clip?: ShowcaseClip; via?: Via } = {},
): Promise<string> {
  const s = report.summary;
  const r = report.run;
  const notes: string[] = [];
  const calibrated = calibrationCells(report);
  const caveatList = caveats(report, options.via ? { via: options.via } : {});
  if (caveatList.length > 0)
    notes.push(
      `<div class="callout caveats"><strong>Caveats</strong><ul>${caveatList.map((c) => `<li>${codeSpans(escapeHtml(c.text))}</li>`).join("")}</ul></div>`,
    );
  for (const note of headlineNotes(report).filter((_, i) => i > 0 || !floorExceedsAttacks(report)))
    notes.push(`<div class="callout"><strong>Note:</strong> ${escapeHtml(note)}</div>`);
  if (r.shard !== null)
    notes.push(
      `<div class="callout"><strong>Shard ${escapeHtml(r.shard)}:</strong> this page covers one slice of the plan; join the shards with <code>provael merge</code> for the run's numbers.</div>`,
    );
  if (report.tests.baseline_arm === null) {
    notes.push(
      `<div class="callout"><strong>No baseline arm:</strong> attack rates cannot be read against the policy's benign behaviour. Add <code>--attacks none</code>.</div>`,
    );
  }
  const chart = await armsChartSvg(report);
  const body = `<h1>Red-team report: ${escapeHtml(r.policy)} on ${escapeHtml(r.suite)}</h1>
<p class="sub">Protocol <code>${escapeHtml(report.protocol)}</code> · Provael ${escapeHtml(report.tool_version)} · ${r.tasks.length} task(s) × ${r.arms.length} arm(s) × ${r.seeds} seed(s) × ${r.repeats} repeat(s) · ${escapeHtml(r.termination)}</p>
${notes.join("\n")}
<p class="takeaway">${escapeHtml(takeaway(report))}</p>
<div class="cards">
${metric("attack", "Attack success (treatment arms)", s.treatment_unsafe, "unsafe episodes under attack; 95% Wilson CI")}
${metric("floor", "Benign floor (baseline arm)", s.baseline_unsafe, "unsafe without any attack")}
${metric("control", "Controls", s.control_unsafe, "harmless changes of matched size")}
${metric("floor", "Clean task success", s.clean_task_success, "baseline arm")}
${metric("attack", "Succeeded but unsafe", s.succ_but_unsafe, "task done, hazard hit (treatment)")}
</div>
<h2>Arms</h2>
<div class="legend-row"><span><span class="dot" style="background:${ROLE_COLOURS.treatment}"></span>attack (treatment)</span><span><span class="dot" style="background:${ROLE_COLOURS.control}"></span>control, listed under the attack it matches</span><span><span class="dot" style="background:${ROLE_COLOURS.baseline}"></span>baseline; grey band: its 95% interval</span></div>
<figure class="card chart">${chart}<figcaption>Each dot is an arm's unsafe rate, the bar its 95% Wilson interval. An attack is worth attention when its bar clears the grey band of the benign floor and its controls stay low.</figcaption></figure>
<h3>Numbers</h3>
${armsTable(report)}
<p class="small muted">${escapeHtml(report.summary.significance ? `The rule: ${ruleText(report.summary.significance)}. It alone decides "significant", "clearly more often" and the SARIF level.` : "No baseline arm: nothing is tested.")} One-sided p: exact McNemar on pinned pairs (b = attacked unsafe and twin safe, c = the reverse), for an increase only, so an arm that made the policy safer is never significant; on a control's row, its matched attack tested against it the same way. BH q (under the adjusted p; secondary, decides nothing): one-sided unpaired Fisher exact test, Benjamini-Hochberg corrected. SARIF: the level the arm gets in code scanning (docs/evidence.md). Episodes not delivered, errored or unjudged are flagged under the arm and excluded from its rates.</p>
${mitigationSection(report)}
<h2>Per task</h2>
<figure class="card chart">${heatmapSvg(report)}<figcaption>Unsafe rate per task and arm; N/A where no episode was judged.</figcaption></figure>
${taskFieldSection(report)}
<h2>One attacked episode beside its benign twin</h2>
${await trajectorySection(report, runDir)}
<h2>Clip of the pair</h2>
${clipSection(report, options.clip ?? readShowcaseClip(report, runDir))}
<h2>Camera frames</h2>
${framesSection(report, runDir)}
<h2>Predicates</h2>
<table><thead><tr><th>task</th><th>predicate</th><th>source</th><th>digest</th>${calibrated ? CALIBRATION_COLUMNS.map((c) => `<th>${escapeHtml(c)}</th>`).join("") : ""}</tr></thead><tbody>
${r.tasks
  .map(
    (t) =>
      `<tr><td>${escapeHtml(t)}</td><td>${escapeHtml(report.calibration[t]?.predicate ?? "—")}</td><td>${escapeHtml(report.calibration[t]?.source ?? "—")}</td><td>${report.calibration[t]?.digest ? `<code>${escapeHtml(report.calibration[t]?.digest as string)}</code>` : "—"}</td>${
        calibrated
          ? calibrated(t)
              .map((c) => `<td>${escapeHtml(c)}</td>`)
              .join("")
          : ""
      }</tr>`,
  )
  .join("\n")}
</tbody></table>
<footer>Evidence, not certification. Everything on this page comes from <code>report.json</code>${existsSync(join(runDir, RUN_FILES.trajectories)) ? " and <code>trajectories.jsonl</code>" : ""} (${escapeHtml(report.trajectories_digest)}). Rates are unsafe episodes over judged episodes; errors, N/A, unjudged and not-delivered episodes are excluded and counted separately. Policy digest: ${r.policy_digest ? `<code>${escapeHtml(r.policy_digest)}</code>` : "not recorded"}.</footer>`;
  return htmlPage(`Provael report: ${r.policy} on ${r.suite}`, body, EXTRA_CSS, { media: true });
}
