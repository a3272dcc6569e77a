/// <reference lib="dom" />
/**
 * Run directories among dropped files, read in the page: a folder holding report.json or
 * journal.jsonl is a run. report.json is checked for its schema name and for numbers that agree
 * with each other (rundir/report-consistency.ts, as `readRun` does); its SHA-256 is the run's
 * digest. A journal without report.json is a run in progress: its episode lines are checked as
 * `readRun` checks them (schema, checksum, the plan they were played under; a torn last line is
 * dropped) and it is shown as `provael view` shows one, its rates so far marked partial.
 */

import { differingFields, planFields } from "../../../core/plan.js";
import { FRAMES_FORMAT, REPORT_SCHEMA, SHOWCASE_CLIP_FORMAT } from "../../../core/protocol.js";
import { CELL_ID, FRAME_FILE, RUN_FILES } from "../../../rundir/names.js";
import { plannedCells } from "../../../rundir/planned.js";
import { consistencyIssues } from "../../../rundir/report-consistency.js";
import type { FramesIndex } from "../../../rundir/schema/frames.js";
import {
  type JournalHeaderFile,
  type JournalRecord,
  journalEpisodeSchema,
  journalHeaderSchema,
  lineSum,
  type ManifestFile,
  type ReportFile,
  type ShowcaseClipFile,
  type TrajectoryStepFile,
} from "../../../rundir/schema/index.js";
import { findPair, type ReadRun } from "../../answers.js";
import type { LocalFile } from "./drop.js";

export interface LocalRun {
  id: string;
  /** The run's folder inside what was dropped. */
  label: string;
  read: ReadRun;
  report: ReportFile | null;
  /** A run in progress: its journal so far (the page builds its report from it). */
  journal: { header: JournalHeaderFile; episodes: JournalRecord[] } | null;
  /** The run's files by their path inside the run directory. */
  files: Map<string, Blob>;
  /** Frames the run saved, by cell. */
  frames: Record<string, FramesIndex>;
  steps: Map<string, TrajectoryStepFile[]> | null;
  /** The run's showcase clip (report.html's), when its info file checks out. */
  clip: ShowcaseClipFile | null;
}

const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");

async function sha256(bytes: ArrayBuffer): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${[...d].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The frames a run saved (`frames/<cell>/<camera>-<step>.png`): steps every camera has. */
function savedFrames(files: Map<string, Blob>): Record<string, FramesIndex> {
  const byCell = new Map<string, Map<number, Set<string>>>();
  const cameras = new Map<string, Set<string>>();
  for (const path of files.keys()) {
    const [top, cell, name, ...rest] = path.split("/");
    if (top !== RUN_FILES.frames || !cell || !name || rest.length > 0 || !CELL_ID.test(cell))
      continue;
    const m = FRAME_FILE.exec(name);
    if (!m) continue;
    const steps = byCell.get(cell) ?? new Map<number, Set<string>>();
    const at = steps.get(Number(m[2])) ?? new Set<string>();
    at.add(m[1] as string);
    steps.set(Number(m[2]), at);
    byCell.set(cell, steps);
    cameras.set(cell, (cameras.get(cell) ?? new Set()).add(m[1] as string));
  }
  const out: Record<string, FramesIndex> = {};
  for (const [cell, steps] of [...byCell].sort(([a], [b]) => a.localeCompare(b))) {
    const cams = [...(cameras.get(cell) ?? [])].sort();
    const whole = [...steps].filter(([, s]) => s.size === cams.length).map(([s]) => s);
    if (whole.length === 0) continue;
    out[cell] = {
      format: FRAMES_FORMAT,
      cell,
      source: "run",
      cameras: cams,
      steps: whole.sort((a, b) => a - b),
      width: null,
      height: null,
    };
  }
  return out;
}

function broken(label: string, files: Map<string, Blob>, message: string): LocalRun {
  return {
    id: "",
    label,
    read: { state: "broken", header: null, problem: { message } },
    report: null,
    journal: null,
    files,
    frames: {},
    steps: null,
    clip: null,
  };
}

/** A journal line, validated and checked against its checksum; a message names what is wrong. */
function checkedLine<T extends { sum: string }>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: Error } },
  value: unknown,
  no: number,
): T {
  const where = `${RUN_FILES.journal} line ${no}`;
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`${where} is not a journal line (${parsed.error.message.slice(0, 200)})`);
  const { sum, ...content } = parsed.data;
  if (lineSum(content) !== sum)
    throw new Error(`${where} fails its checksum: it was changed after it was written`);
  return parsed.data;
}

/**
 * A run in progress read from its journal: the header, every episode line so far (a last line
 * that does not parse is a torn write, dropped), and each cell's steps from its last line.
 */
function readJournal(text: string): {
  header: JournalHeaderFile;
  episodes: JournalRecord[];
  steps: Map<string, TrajectoryStepFile[]>;
} {
  const lines = text.split("\n");
  // What follows the last newline is a line still being written.
  lines.pop();
  const parse = (line: string, no: number) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new Error(`${RUN_FILES.journal} line ${no} is not JSON`);
    }
  };
  const header = checkedLine(journalHeaderSchema, parse(lines[0] ?? "", 1), 1);
  const expected = planFields(header.plan);
  const episodes: JournalRecord[] = [];
  const steps = new Map<string, TrajectoryStepFile[]>();
  lines.slice(1).forEach((line, i) => {
    const no = i + 2;
    let value: unknown;
    try {
      value = parse(line, no);
    } catch (e) {
      if (no === lines.length) return;
      throw e;
    }
    const ep = checkedLine(journalEpisodeSchema, value, no);
    const fields = differingFields(expected, ep.plan_fields);
    if (fields.length > 0)
      throw new Error(
        `${RUN_FILES.journal} line ${no} was played under another plan than the journal's: it differs in ${fields.join(", ")}`,
      );
    episodes.push(ep.record);
    // A cell played again on resume (after an error) keeps its last line's steps.
    steps.set(ep.record.cell, ep.trajectory);
  });
  return { header, episodes, steps };
}

async function readOne(label: string, files: Map<string, Blob>): Promise<LocalRun> {
  const reportBlob = files.get(RUN_FILES.report);
  const journal = files.get(RUN_FILES.journal);
  let header: JournalHeaderFile | null = null;
  if (journal) {
    const text = await journal.text();
    try {
      header = JSON.parse(text.slice(0, text.indexOf("\n") >>> 0)) as JournalHeaderFile;
    } catch {
      return broken(label, files, `${RUN_FILES.journal} line 1 is not JSON`);
    }
  }
  let manifest: ManifestFile | null = null;
  const manifestBlob = files.get(RUN_FILES.manifest);
  if (manifestBlob) {
    try {
      manifest = JSON.parse(await manifestBlob.text()) as ManifestFile;
    } catch {
      return broken(label, files, `${RUN_FILES.manifest} is not JSON`);
    }
  }
  if (!reportBlob) {
    if (!journal) return broken(label, files, `no ${RUN_FILES.report} and no ${RUN_FILES.journal}`);
    let read: ReturnType<typeof readJournal>;
    try {
      read = readJournal(await journal.text());
    } catch (e) {
      return broken(label, files, (e as Error).message);
    }
    return {
      id: "",
      label,
      read: { state: "in-progress", header: read.header, planned: plannedCells(read.header) },
      report: null,
      journal: { header: read.header, episodes: read.episodes },
      files,
      frames: savedFrames(files),
      steps: read.steps,
      clip: null,
    };
  }
  const bytes = await reportBlob.arrayBuffer();
  let report: ReportFile;
  try {
    report = JSON.parse(new TextDecoder().decode(bytes)) as ReportFile;
  } catch (e) {
    return broken(label, files, `${RUN_FILES.report} is not JSON (${(e as Error).message})`);
  }
  if (report?.schema !== REPORT_SCHEMA)
    return broken(label, files, `${RUN_FILES.report}: schema is not ${REPORT_SCHEMA}`);
  let issues: ReturnType<typeof consistencyIssues>;
  try {
    issues = consistencyIssues(report);
  } catch (e) {
    return broken(label, files, `${RUN_FILES.report}: ${(e as Error).message}`);
  }
  if (issues.length > 0)
    return broken(label, files, `${RUN_FILES.report}: ${issues[0]?.message ?? "numbers disagree"}`);
  const digest = await sha256(bytes);
  return {
    id: digest.slice(7, 17),
    label,
    read: { state: "finished", header, manifest, digest },
    report,
    journal: null,
    files,
    frames: savedFrames(files),
    steps: null,
    clip: await showcaseClip(report, files),
  };
}

/**
 * The clip report.html embeds, when `clips/showcase.json` reads as one, names an episode of this
 * report with its benign twin, and gives the SHA-256 of `clips/showcase.webm` as it is.
 */
async function showcaseClip(
  report: ReportFile,
  files: Map<string, Blob>,
): Promise<ShowcaseClipFile | null> {
  const infoBlob = files.get(RUN_FILES.showcaseClipInfo);
  const video = files.get(RUN_FILES.showcaseClip);
  if (!infoBlob || !video) return null;
  try {
    const info = JSON.parse(await infoBlob.text()) as ShowcaseClipFile;
    if (info.format !== SHOWCASE_CLIP_FORMAT) return null;
    if ((findPair(report, info.attacked).twin?.cell ?? null) !== info.twin) return null;
    return (await sha256(await video.arrayBuffer())) === info.sha256 ? info : null;
  } catch {
    return null;
  }
}

/** The runs among the files: every folder holding report.json or journal.jsonl. */
export async function readRuns(all: LocalFile[]): Promise<LocalRun[]> {
  const roots = [
    ...new Set(
      all
        .filter((f) => {
          const name = f.path.slice(f.path.lastIndexOf("/") + 1);
          return name === RUN_FILES.report || name === RUN_FILES.journal;
        })
        .map((f) => dirOf(f.path)),
    ),
  ].sort();
  const runs: LocalRun[] = [];
  for (const root of roots) {
    const files = new Map<string, Blob>();
    const prefix = root ? `${root}/` : "";
    for (const f of all)
      if (f.path.startsWith(prefix)) files.set(f.path.slice(prefix.length), f.file);
    const run = await readOne(root || "(dropped files)", files);
    if (!run.id)
      run.id = (await sha256(new TextEncoder().encode(`${root}\u0000${all.length}`).buffer)).slice(
        7,
        17,
      );
    runs.push(run);
  }
  return runs;
}

/** A finished run's steps, by cell, read from trajectories.jsonl once. */
export async function stepsOf(run: LocalRun): Promise<Map<string, TrajectoryStepFile[]>> {
  if (run.steps) return run.steps;
  const out = new Map<string, TrajectoryStepFile[]>();
  const blob = run.files.get(RUN_FILES.trajectories);
  if (blob)
    for (const line of (await blob.text()).split("\n")) {
      if (line.trim() === "") continue;
      const st = JSON.parse(line) as TrajectoryStepFile;
      const list = out.get(st.cell) ?? [];
      list.push(st);
      out.set(st.cell, list);
    }
  for (const list of out.values()) list.sort((a, b) => a.step - b.step);
  run.steps = out;
  return out;
}
