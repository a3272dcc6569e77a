/**
 * `readRun(dir)`: the one validated reader of a run directory. Every file it reads is checked
 * against its schema (src/rundir/schema), and the answer says what state the run is in:
 *
 * - `finished`: report.json is valid and the commit point (the manifest, written last) names it,
 *   or, for directories without a journal (a merge, a copied report), report.json alone;
 * - `in-progress`: a journal and no commit point yet; its episodes so far are returned (a torn
 *   last line, the one being written, is left out). A killed run looks the same until resumed;
 * - `broken`: something fails its schema; `problem` names the file, the line and the first bad
 *   field.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { differingFields, planFields } from "../core/plan.js";
import { manifestNamesReport, readCommit } from "./commit.js";
import { CELL_ID, RUN_FILES } from "./files.js";
import { plannedCells } from "./planned.js";
import { parseReport, type ReadReport, readReportBytes, readReportFile } from "./report.js";
import {
  FRAME_FILE,
  FRAMES_FORMAT,
  type FramesIndex,
  type JournalHeaderFile,
  type JournalRecord,
  journalEpisodeSchema,
  journalHeaderSchema,
  lineSum,
  type ManifestFile,
  manifestSchema,
  type ReportFile,
  type TrajectoryStepFile,
  trajectoryStepSchema,
} from "./schema/index.js";

/** What is wrong with a run directory, down to the first bad field. */
export interface RunProblem {
  file: string;
  /** 1-based line of a JSON Lines file. */
  line?: number;
  /** Dotted path of the first bad field, `(the whole file)` when it is not JSON at all. */
  field: string;
  message: string;
  /** How many schema issues the file (or line) has. */
  issues: number;
}

interface RunBase {
  dir: string;
  /** The journal's header, when the directory has a journal. */
  header: JournalHeaderFile | null;
}

export interface FinishedRun extends RunBase {
  state: "finished";
  report: ReportFile;
  /** SHA-256 of report.json's bytes: the run's digest. */
  digest: string;
  manifest: ManifestFile | null;
  /** Whether the commit point names every output as it is on disk. */
  committed: boolean;
  /** Frames the run saved, by cell. */
  frames: Record<string, FramesIndex>;
}

export interface RunningRun extends RunBase {
  state: "in-progress";
  header: JournalHeaderFile;
  /** Episodes journalled so far, in journal order. */
  episodes: JournalRecord[];
  /** Cells the plan (or its shard) holds. */
  planned: number;
  /** A last line that was still being written (left out). */
  droppedTail: boolean;
  journalBytes: number;
  journalModifiedMs: number;
}

export interface BrokenRun extends RunBase {
  state: "broken";
  problem: RunProblem;
}

export type RunRead = FinishedRun | RunningRun | BrokenRun;

/** Thrown inside the reader and turned into a `broken` answer. */
class Bad extends Error {
  constructor(readonly problem: RunProblem) {
    super(problem.message);
  }
}

function firstIssue(file: string, error: z.ZodError, line?: number): RunProblem {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join(".") : "(the whole value)";
  return {
    file,
    ...(line === undefined ? {} : { line }),
    field,
    message: `${file}${line === undefined ? "" : ` line ${line}`}: first bad field '${field}': ${issue?.message ?? "invalid"}`,
    issues: error.issues.length,
  };
}

function parseJson(file: string, text: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Bad({
      file,
      ...(line === undefined ? {} : { line }),
      field: "(the whole file)",
      message: `${file}${line === undefined ? "" : ` line ${line}`} is not JSON (${(e as Error).message})`,
      issues: 1,
    });
  }
}

function validate<T>(schema: z.ZodType<T>, file: string, value: unknown, line?: number): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Bad(firstIssue(file, parsed.error, line));
  return parsed.data;
}

/** A journal line, validated and then checked against the checksum it carries. */
function validateLine<T extends { sum: string }>(
  schema: z.ZodType<T>,
  value: unknown,
  line: number,
): T {
  const checked = validate(schema, RUN_FILES.journal, value, line);
  const { sum, ...content } = checked;
  if (lineSum(content) !== sum) {
    throw new Bad({
      file: RUN_FILES.journal,
      line,
      field: "sum",
      message: `${RUN_FILES.journal} line ${line} fails its checksum: it was changed after it was written`,
      issues: 1,
    });
  }
  return checked;
}

/** report.json's bytes through the one report validator, its refusal turned into a problem. */
function validReport(bytes: Buffer): ReportFile {
  try {
    return parseReport(bytes, RUN_FILES.report);
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw e;
    const details = (e.details ?? {}) as { field?: unknown; issues?: unknown };
    throw new Bad({
      file: RUN_FILES.report,
      field: typeof details.field === "string" ? details.field : "(the whole file)",
      message: e.message,
      issues: typeof details.issues === "number" ? details.issues : 1,
    });
  }
}

/** Calls `each` with every complete line of a file (and its 1-based number); returns the tail. */
export function forEachLine(
  path: string,
  each: (line: Buffer, lineNo: number) => boolean | undefined,
): { tail: Buffer; bytes: number } {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(1 << 20);
  let pending: Buffer[] = [];
  let lineNo = 0;
  let position = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) break;
      let from = 0;
      for (let i = 0; i < n; i++) {
        if (buf[i] !== 0x0a) continue;
        pending.push(Buffer.from(buf.subarray(from, i)));
        lineNo += 1;
        const stop = each(Buffer.concat(pending), lineNo);
        pending = [];
        from = i + 1;
        if (stop === false) return { tail: Buffer.alloc(0), bytes: position + from };
      }
      if (from < n) pending.push(Buffer.from(buf.subarray(from, n)));
      position += n;
    }
  } finally {
    closeSync(fd);
  }
  return { tail: Buffer.concat(pending), bytes: position };
}

/** The journal's header alone (its first line), validated. */
export function readJournalHeader(dir: string): JournalHeaderFile {
  const path = join(dir, RUN_FILES.journal);
  let first: Buffer | null = null;
  const { tail } = forEachLine(path, (line) => {
    first = line;
    return false;
  });
  const bytes: Buffer = first ?? tail;
  if (bytes.length === 0)
    throw new Bad({
      file: RUN_FILES.journal,
      line: 1,
      field: "(the whole file)",
      message: `${RUN_FILES.journal} is empty`,
      issues: 1,
    });
  return validateLine(
    journalHeaderSchema,
    parseJson(RUN_FILES.journal, bytes.toString("utf8"), 1),
    1,
  );
}

function readJournalEpisodes(
  dir: string,
  header: JournalHeaderFile,
): {
  episodes: JournalRecord[];
  droppedTail: boolean;
  bytes: number;
} {
  const path = join(dir, RUN_FILES.journal);
  const episodes: JournalRecord[] = [];
  const expected = planFields(header.plan);
  // Lines are judged one late, so that a last line that does not parse counts as a torn write.
  let previous: { line: Buffer; no: number } | null = null;
  const judge = (line: Buffer, no: number) => {
    if (no === 1) return;
    const value = parseJson(RUN_FILES.journal, line.toString("utf8"), no);
    const checked = validateLine(journalEpisodeSchema, value, no);
    const fields = differingFields(expected, checked.plan_fields);
    if (fields.length > 0) {
      throw new Bad({
        file: RUN_FILES.journal,
        line: no,
        field: "plan_fields",
        message: `${RUN_FILES.journal} line ${no} was played under another plan than the journal's: it differs in ${fields.join(", ")}`,
        issues: fields.length,
      });
    }
    episodes.push(checked.record);
  };
  const { tail, bytes } = forEachLine(path, (line, no) => {
    if (previous) judge(previous.line, previous.no);
    previous = { line, no };
    return undefined;
  });
  let droppedTail = tail.length > 0;
  const last = previous as { line: Buffer; no: number } | null;
  if (last) {
    try {
      judge(last.line, last.no);
    } catch (e) {
      // The newline of a torn write may already be there; only an unparsable last line is torn.
      if (!(e instanceof Bad) || e.problem.field !== "(the whole file)" || tail.length > 0) throw e;
      droppedTail = true;
    }
  }
  return { episodes, droppedTail, bytes };
}

/** The frames a finished run saved (`frames/<cell>/<camera>-<step>.png`), indexed by cell. */
export function listRunFrames(dir: string): Record<string, FramesIndex> {
  const root = join(dir, RUN_FILES.frames);
  const out: Record<string, FramesIndex> = {};
  let cells: string[];
  try {
    cells = readdirSync(root);
  } catch {
    return out;
  }
  for (const cell of cells.sort()) {
    if (!CELL_ID.test(cell)) continue;
    let files: string[];
    try {
      files = readdirSync(join(root, cell));
    } catch {
      continue;
    }
    const byStep = new Map<number, Set<string>>();
    const cameras = new Set<string>();
    for (const f of files) {
      const m = FRAME_FILE.exec(f);
      if (!m) continue;
      const camera = m[1] as string;
      const step = Number(m[2]);
      cameras.add(camera);
      const s = byStep.get(step) ?? new Set<string>();
      s.add(camera);
      byStep.set(step, s);
    }
    const cams = [...cameras].sort();
    const steps = [...byStep.entries()]
      .filter(([, s]) => s.size === cams.length)
      .map(([step]) => step)
      .sort((a, b) => a - b);
    if (steps.length === 0) continue;
    out[cell] = {
      format: FRAMES_FORMAT,
      cell,
      source: "run",
      cameras: cams,
      steps,
      width: null,
      height: null,
    };
  }
  return out;
}

/** Reads and validates a run directory; never throws for what is on disk (see `broken`). */
export function readRun(dir: string): RunRead {
  let header: JournalHeaderFile | null = null;
  try {
    const hasJournal = existsSync(join(dir, RUN_FILES.journal));
    const reportPath = join(dir, RUN_FILES.report);
    if (hasJournal) header = readJournalHeader(dir);
    const commit = readCommit(dir);
    let manifest: ManifestFile | null = null;
    const manifestPath = join(dir, RUN_FILES.manifest);
    if (existsSync(manifestPath)) {
      const raw = parseJson(RUN_FILES.manifest, readFileSync(manifestPath, "utf8"));
      manifest = validate(manifestSchema, RUN_FILES.manifest, raw);
    }
    const bytes = existsSync(reportPath) ? readReportBytes(reportPath) : null;
    const digest = bytes ? sha256(bytes) : null;
    // Finished: committed, or a manifest naming this report (writers before commit points, the
    // bridge), or a report with no journal beside it (nothing is being written).
    const finished =
      bytes !== null && (commit !== null || manifest?.report_digest === digest || !hasJournal);
    if (finished && bytes && digest) {
      const report = validReport(bytes);
      return {
        state: "finished",
        dir,
        header,
        report,
        digest,
        manifest,
        committed: commit !== null,
        frames: listRunFrames(dir),
      };
    }
    if (!header) {
      return {
        state: "broken",
        dir,
        header,
        problem: {
          file: RUN_FILES.report,
          field: "(the whole file)",
          message: `${dir} holds no Provael run (no ${RUN_FILES.report} and no ${RUN_FILES.journal})`,
          issues: 1,
        },
      };
    }
    const journal = readJournalEpisodes(dir, header);
    const st = statSync(join(dir, RUN_FILES.journal));
    return {
      state: "in-progress",
      dir,
      header,
      episodes: journal.episodes,
      planned: plannedCells(header),
      droppedTail: journal.droppedTail,
      journalBytes: journal.bytes,
      journalModifiedMs: st.mtimeMs,
    };
  } catch (e) {
    if (e instanceof Bad) return { state: "broken", dir, header, problem: e.problem };
    return {
      state: "broken",
      dir,
      header,
      problem: {
        file: "(the directory)",
        field: "(the whole file)",
        message: `cannot read ${dir}: ${(e as Error).message}`,
        issues: 1,
      },
    };
  }
}

/**
 * The steps of the given cells, validated: from trajectories.jsonl of a finished run, or from
 * the journal's episode lines of a run in progress. The file is scanned once for where each
 * cell's lines lie (`lineIndex`); a request reads and parses only the lines of its cells.
 */
export function readSteps(
  dir: string,
  cells: readonly string[],
  from: "trajectories" | "journal",
): Map<string, TrajectoryStepFile[]> {
  const out = new Map<string, TrajectoryStepFile[]>(cells.map((c) => [c, []]));
  const file = from === "trajectories" ? RUN_FILES.trajectories : RUN_FILES.journal;
  const path = join(dir, file);
  if (cells.length === 0 || !existsSync(path)) return out;
  try {
    collectSteps(path, file, from, lineIndex(path), out);
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    throw new ProvaelError("io/malformed", `${join(dir, file)}: ${e.problem.message}`, {
      details: { file, line: e.problem.line ?? null, field: e.problem.field },
      hint: "the run directory was edited or damaged",
    });
  }
  for (const list of out.values()) list.sort((a, b) => a.step - b.step);
  return out;
}

/**
 * Where each cell's lines lie in a JSON-lines file: runs of adjacent lines, each `[offset,
 * bytes, first line number]` (a cell's trajectory steps are written together, so one run per
 * cell). Only whole lines are indexed: a torn last line waits for its newline.
 */
interface LineIndex {
  ino: number;
  mtimeMs: number;
  size: number;
  /** Bytes indexed: up to and including the last newline seen. */
  end: number;
  lines: number;
  cells: Map<string, number[][]>;
}

const indexes = new Map<string, LineIndex>();
const CELL_KEY = Buffer.from('"cell":"');

/**
 * The line index of `path`, kept while the file is unchanged, extended when it only grew (a
 * journal being appended to), built again when it was replaced or shrank.
 */
export function lineIndex(path: string): LineIndex {
  const st = statSync(path);
  let idx = indexes.get(path);
  if (idx && idx.ino === st.ino && idx.size === st.size && idx.mtimeMs === st.mtimeMs) return idx;
  if (
    !idx ||
    idx.ino !== st.ino ||
    st.size < idx.end ||
    (st.size === idx.size && st.mtimeMs !== idx.mtimeMs)
  )
    idx = { ino: st.ino, mtimeMs: 0, size: 0, end: 0, lines: 0, cells: new Map() };
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    let position = idx.end;
    let lineStart = idx.end;
    let carry = Buffer.alloc(0);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) break;
      const chunk =
        carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      const base = position - carry.length;
      let from = 0;
      for (let nl = chunk.indexOf(0x0a, from); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
        idx.lines += 1;
        const at = chunk.indexOf(CELL_KEY, from);
        if (at !== -1 && at < nl) {
          const id = chunk.toString("latin1", at + CELL_KEY.length, at + CELL_KEY.length + 21);
          if (CELL_ID.test(id)) {
            const runs = idx.cells.get(id) ?? [];
            const last = runs[runs.length - 1];
            const offset = base + from;
            const bytes = nl + 1 - from;
            if (last && (last[0] as number) + (last[1] as number) === offset)
              last[1] = (last[1] as number) + bytes;
            else runs.push([offset, bytes, idx.lines]);
            idx.cells.set(id, runs);
          }
        }
        from = nl + 1;
      }
      lineStart = base + from;
      carry = Buffer.from(chunk.subarray(from));
      position += n;
    }
    idx.end = lineStart;
  } finally {
    closeSync(fd);
  }
  idx.size = st.size;
  idx.mtimeMs = st.mtimeMs;
  indexes.set(path, idx);
  return idx;
}

function collectSteps(
  path: string,
  file: string,
  from: "trajectories" | "journal",
  idx: LineIndex,
  out: Map<string, TrajectoryStepFile[]>,
): void {
  const fd = openSync(path, "r");
  try {
    for (const [cell, list] of out) {
      const runs = idx.cells.get(cell) ?? [];
      // A cell played again on resume (after an error) keeps its last journal line.
      const chosen = from === "journal" ? runs.slice(-1) : runs;
      for (const [offset, bytes, firstLine] of chosen as [number, number, number][]) {
        const data = Buffer.allocUnsafe(bytes);
        readSync(fd, data, 0, bytes, offset);
        const lines = data.toString("utf8").split("\n");
        lines.pop();
        if (from === "journal") {
          // Only the last line of the run counts (earlier ones are the same cell played before).
          const no = firstLine + lines.length - 1;
          if (no <= 1) continue;
          const ep = validate(
            journalEpisodeSchema,
            file,
            parseJson(file, lines[lines.length - 1] as string, no),
            no,
          );
          if (ep.record.cell === cell) list.splice(0, list.length, ...ep.trajectory);
          continue;
        }
        lines.forEach((text, i) => {
          const no = firstLine + i;
          const step = validate(trajectoryStepSchema, file, parseJson(file, text, no), no);
          if (step.cell === cell) list.push(step);
        });
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads DIR/report.json of a finished run, validated. A directory with a journal but no commit
 * point is an unfinished run (killed, or still running), even when report.json is already there.
 */
export function readRunReport(dir: string): ReadReport {
  const path = join(dir, RUN_FILES.report);
  const partial = existsSync(join(dir, RUN_FILES.journal));
  const resume = `finish it with \`provael attack --resume --out ${dir}\` and the original flags`;
  if (!existsSync(path)) {
    throw new ProvaelError(
      partial ? "run/incomplete" : "run/not-found",
      partial
        ? `${dir} holds an unfinished run (no ${RUN_FILES.report} yet)`
        : `${dir} holds no Provael run (no ${RUN_FILES.report})`,
      { hint: partial ? resume : "pass the --out directory of a finished `provael attack`" },
    );
  }
  if (partial && !manifestNamesReport(dir)) {
    throw new ProvaelError(
      "run/incomplete",
      `${dir} holds an unfinished run: its outputs were being written when it stopped (no ${RUN_FILES.manifest} naming this ${RUN_FILES.report})`,
      { hint: resume },
    );
  }
  return readReportFile(path);
}
