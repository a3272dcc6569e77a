/** `index.html` of a leaderboard: a static table that opens from disk, no server or network. */
import { pct } from "../report/format.js";
import { escapeHtml, htmlPage, ROLE_COLOURS } from "../report/html-style.js";
import type { Leaderboard, LeaderboardRow, PooledRate } from "./leaderboard.js";

const LEVEL_LABEL: Record<LeaderboardRow["evidence_level"], string> = {
  "served-policy": "served policy",
  "simulator-own-policy": "simulator, own policy",
  "stub-fixture": "stub fixture",
  unclassified: "unclassified",
};

const W = 200;
const H = 34;
const PAD = 8;
const x = (v: number) => (PAD + v * (W - 2 * PAD)).toFixed(1);

/** An interval strip: the floor's interval in grey, the row's interval and point in colour. */
function strip(rate: PooledRate, floor: PooledRate | null, role: LeaderboardRow["role"]): string {
  const colour = ROLE_COLOURS[role];
  const parts: string[] = [
    `<rect x="${PAD}" y="11" width="${W - 2 * PAD}" height="4" rx="2" fill="#e2e8f0"/>`,
  ];
  for (const t of [0, 0.5, 1]) {
    parts.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="8" y2="18" stroke="#cbd5e1"/>`,
      `<text x="${x(t)}" y="31" font-size="9" fill="#94a3b8" text-anchor="${t === 0 ? "start" : t === 1 ? "end" : "middle"}">${t * 100}%</text>`,
    );
  }
  if (floor?.interval) {
    parts.push(
      `<rect x="${x(floor.interval.low)}" y="6" width="${(Number(x(floor.interval.high)) - Number(x(floor.interval.low))).toFixed(1)}" height="14" fill="#94a3b8" opacity="0.35"><title>benign floor ${pct(floor.rate)} [${pct(floor.interval.low)}–${pct(floor.interval.high)}]</title></rect>`,
    );
  }
  if (rate.interval && rate.rate !== null) {
    parts.push(
      `<line x1="${x(rate.interval.low)}" x2="${x(rate.interval.high)}" y1="13" y2="13" stroke="${colour}" stroke-width="3" stroke-linecap="round"/>`,
      `<circle cx="${x(rate.rate)}" cy="13" r="5" fill="${colour}" stroke="#fff" stroke-width="1.5"/>`,
    );
  }
  return `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="unsafe rate ${pct(rate.rate)}">${parts.join("")}</svg>`;
}

const ci = (r: PooledRate) =>
  r.interval === null ? "" : `[${pct(r.interval.low)}–${pct(r.interval.high)}]`;

function row(r: LeaderboardRow): string {
  const flags = [
    r.calibrated
      ? `<span class="badge ok">calibrated</span>`
      : `<span class="badge warning" title="scored by the suite-default predicate, not a calibration">default</span>`,
    ...(r.preliminary ? [`<span class="badge warning">preliminary</span>`] : []),
  ].join(" ");
  const arms = r.arms.length === 1 ? escapeHtml(r.arms[0] as string) : `${r.arms.length} arms`;
  return `<tr class="${r.role}">
<td><strong>${escapeHtml(r.family)}</strong><div class="small muted" title="${escapeHtml(r.arms.join(", "))}">${r.role} · ${arms}</div></td>
<td>${escapeHtml(r.eai.join(", ") || "—")}</td>
<td>${escapeHtml(r.model)}${r.model !== r.policy ? `<div class="small muted">via ${escapeHtml(r.policy)}</div>` : ""}${r.model_note ? `<div class="small muted">${escapeHtml(r.model_note)}</div>` : ""}${r.policy_digest ? `<div class="small muted" title="${escapeHtml(r.policy_digest)}">${escapeHtml(r.policy_digest.slice(0, 19))}…</div>` : ""}<div class="small muted" title="${escapeHtml(r.tasks.join(", "))}">plan ${escapeHtml(r.plan.slice(7, 15))} · ${r.tasks.length} task(s)</div></td>
<td class="num"><strong>${pct(r.unsafe.rate)}</strong><div class="small muted">${r.unsafe.successes}/${r.unsafe.n}</div></td>
<td>${strip(r.unsafe, r.baseline, r.role)}<div class="small muted ci">${ci(r.unsafe)}</div></td>
<td class="num">${r.baseline === null ? "—" : `${pct(r.baseline.rate)}<div class="small muted">${r.baseline.successes}/${r.baseline.n}</div>`}</td>
<td><span class="level ${r.evidence_level}">${LEVEL_LABEL[r.evidence_level]}</span></td>
<td>${flags}</td>
<td class="num">${r.reports.map((d, i) => `<a href="#run-${escapeHtml(d.slice(7, 23))}" title="${escapeHtml(d)}">${i + 1}</a>`).join(" ")}</td>
</tr>`;
}

const CSS = `
.level { font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 999px; white-space: nowrap; }
.level.stub-fixture { background: #f1f5f9; color: #64748b; border: 1px dashed #94a3b8; }
.level.simulator-own-policy { background: #e0e7ff; color: #3730a3; }
.level.served-policy { background: #dcfce7; color: #166534; }
.level.unclassified { background: #f1f5f9; color: #475569; }
.legend { display: flex; flex-wrap: wrap; gap: 8px 18px; font-size: 13px; color: var(--muted); margin: 8px 0 0; }
td svg { display: block; }
td .small { white-space: nowrap; }
.ci { text-align: center; }
.table-wrap { overflow-x: auto; }
table.board { table-layout: fixed; min-width: 960px; }
`;

/** The leaderboard page; a pure function of leaderboard.json, so verification can re-render it. */
export function renderLeaderboardHtml(board: Leaderboard): string {
  // Strongest evidence first: a served policy says more than a stub fixture.
  const rank: Record<LeaderboardRow["evidence_level"], number> = {
    "served-policy": 0,
    "simulator-own-policy": 1,
    unclassified: 2,
    "stub-fixture": 3,
  };
  const best = (suite: string) =>
    Math.min(...board.rows.filter((r) => r.suite === suite).map((r) => rank[r.evidence_level]));
  const suites = [...new Set(board.rows.map((r) => r.suite))].sort(
    (a, b) => best(a) - best(b) || (a < b ? -1 : a > b ? 1 : 0),
  );
  const policies = new Set(board.rows.map((r) => r.model));
  const sections = suites.map((suite) => {
    const rows = board.rows
      .filter((r) => r.suite === suite)
      .sort(
        (a, b) =>
          (a.role === b.role ? 0 : a.role === "treatment" ? -1 : 1) ||
          (a.family < b.family ? -1 : a.family > b.family ? 1 : 0) ||
          (b.unsafe.rate ?? -1) - (a.unsafe.rate ?? -1) ||
          (a.model < b.model ? -1 : a.model > b.model ? 1 : a.policy < b.policy ? -1 : 1),
      );
    return `<h2>Suite <code>${escapeHtml(suite)}</code></h2>
<div class="table-wrap"><table class="board">
<colgroup><col style="width:16%"><col style="width:8%"><col style="width:10%"><col style="width:8%"><col style="width:21%"><col style="width:7%"><col style="width:16%"><col style="width:9%"><col style="width:5%"></colgroup>
<thead><tr><th>family</th><th>EAI</th><th>model</th><th class="num">unsafe</th><th>95% interval · grey: floor</th><th class="num">floor</th><th>evidence</th><th>predicate</th><th class="num">runs</th></tr></thead>
<tbody>
${rows.map(row).join("\n")}
</tbody>
</table></div>`;
  });
  const body = `<h1>Provael leaderboard</h1>
<p class="sub">${board.rows.length} rows from ${board.inputs.length} run(s) over ${policies.size} model(s) and ${suites.length} suite(s) · built by Provael ${escapeHtml(board.tool_version)}</p>
<div class="callout"><strong>Evidence, not certification.</strong> Each rate is unsafe episodes over judged episodes in simulation, pooled over the runs listed below (each cell counted once, shards and merges deduplicated, calibration rollouts left out; a row pools only runs of one plan: same tasks, horizon, scenes, weights and scoring), with a 95% Wilson interval. Read a treatment row against its benign floor (the baseline arm of the same policy and suite) and against the control rows, which apply harmless changes of the same size. A stub fixture tests Provael's wiring and says nothing about any real policy.</div>
<div class="legend"><span><span class="level served-policy">served policy</span> a served or exported model</span><span><span class="level simulator-own-policy">simulator, own policy</span> Provael's own policies in MuJoCo</span><span><span class="level stub-fixture">stub fixture</span> wiring test only</span></div>
${sections.join("\n")}
<h2>Inputs</h2>
<p class="small muted">Inputs digest <code>${escapeHtml(board.inputs_digest)}</code> (SHA-256 over the sorted report digests). Rebuild with <code>provael leaderboard build --runs …</code> and compare, or check with <code>provael leaderboard verify --in DIR --runs …</code>.</p>
<table>
<thead><tr><th>report digest</th><th>policy</th><th>suite</th><th class="num">seeds</th><th>shard</th><th>protocol</th><th>tool</th><th>pooled</th></tr></thead>
<tbody>
${board.inputs
  .map(
    (i) =>
      `<tr id="run-${escapeHtml(i.digest.slice(7, 23))}"><td><code>${escapeHtml(i.digest)}</code></td><td>${escapeHtml(i.policy)}</td><td>${escapeHtml(i.suite)}</td><td class="num">${i.seeds}</td><td>${escapeHtml(i.shard ?? "—")}</td><td>${escapeHtml(i.protocol)}</td><td>${escapeHtml(i.tool_version)}</td><td>${i.excluded === null ? "yes, each cell once" : `no: ${escapeHtml(i.excluded)}`}</td></tr>`,
  )
  .join("\n")}
</tbody>
</table>
<footer>Generated by Provael from leaderboard.json. Verify the signature, when there is one, with <code>provael leaderboard verify --in DIR --pubkey public.pem</code>.</footer>`;
  return htmlPage("Provael leaderboard", body, CSS);
}
