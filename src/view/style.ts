/** The viewer's stylesheet (inline in the page). Colours follow report.html's roles. */
export const VIEW_CSS = `
:root { --bg:#f7f7f5; --card:#fff; --ink:#1d1d1f; --muted:#6b6b70; --line:#e2e2e0;
  --unsafe:#c62828; --safe:#2e7d32; --warn:#b26a00; --accent:#1f5fbf;
  --baseline:#607d8b; --control:#8d6e63; --treatment:#c62828; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--ink); background:var(--bg); }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
header.top { display:flex; gap:16px; align-items:center; padding:10px 20px; background:#1d1d1f; color:#fff; }
header.top a { color:#fff; } .brand { font-weight:700; letter-spacing:.02em; }
#crumbs { flex:1; color:#bbb; } #crumbs a { color:#ddd; } .version { color:#999; font-size:12px; }
main { padding:16px 20px 40px; max-width:1400px; margin:0 auto; }
h1 { font-size:22px; margin:4px 0 8px; } h2 { font-size:16px; margin:22px 0 8px; }
.muted { color:var(--muted); } .small { font-size:12px; }
.cards { display:flex; flex-wrap:wrap; gap:10px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:10px 14px; min-width:180px; }
.card .label { color:var(--muted); font-size:12px; } .card .value { font-size:22px; font-weight:600; }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f0ee; font-weight:600; font-size:12px; position:sticky; top:0; }
tr.sub td:first-child { padding-left:24px; } td.num { text-align:right; font-variant-numeric:tabular-nums; }
.badge { display:inline-block; padding:1px 7px; border-radius:10px; font-size:11px; font-weight:600; background:#eee; color:#333; }
.badge.unsafe, .badge.broken { background:#fde7e7; color:var(--unsafe); }
.badge.safe, .badge.finished { background:#e6f4e7; color:var(--safe); }
.badge.running, .badge.partial, .badge.warn { background:#fff3dc; color:var(--warn); }
.badge.role-baseline { background:#e8eef1; color:var(--baseline); } .badge.role-control { background:#f1ebe8; color:var(--control); }
.badge.role-treatment { background:#fde7e7; color:var(--treatment); }
.bar { position:relative; height:8px; background:#eee; border-radius:4px; min-width:120px; }
.bar .ci { position:absolute; top:0; height:8px; background:rgba(198,40,40,.25); border-radius:4px; }
.bar .pt { position:absolute; top:-2px; width:3px; height:12px; background:var(--unsafe); }
.progress { height:6px; background:#eee; border-radius:3px; overflow:hidden; } .progress > div { height:6px; background:var(--warn); }
.filters { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:center; background:var(--card); border:1px solid var(--line); padding:8px 10px; border-radius:6px; margin-bottom:8px; }
.filters label { white-space:nowrap; } .filters select, .filters input[type=search] { font:inherit; padding:2px 4px; }
.heat td.cell { text-align:center; font-variant-numeric:tabular-nums; }
.pair { display:grid; grid-template-columns:1fr 1fr; gap:14px; }
.side { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:10px; }
.side.attacked { border-top:4px solid var(--treatment); } .side.twin { border-top:4px solid var(--baseline); }
.players { display:flex; flex-wrap:wrap; gap:8px; }
.player figure { margin:0; } .player img { image-rendering:pixelated; width:256px; height:auto; border:3px solid #555; background:#222; display:block; }
.player img.fired { border-color:var(--unsafe); } .player figcaption { font-size:12px; color:var(--muted); }
.controls { display:flex; gap:8px; align-items:center; flex-wrap:wrap; margin:10px 0; background:var(--card); border:1px solid var(--line); padding:8px 10px; border-radius:6px; position:sticky; top:0; z-index:2; }
.controls input[type=range] { flex:1; min-width:200px; }
button { font:inherit; padding:3px 10px; border:1px solid #bbb; border-radius:4px; background:#fff; cursor:pointer; } button:hover { background:#f0f0f0; }
.timeline { display:grid; grid-template-columns:160px 1fr; gap:2px 8px; align-items:center; font-size:12px; margin:6px 0; }
.track { position:relative; height:14px; background:#eee; display:flex; }
.track span { flex:1; height:14px; } .track span.u { background:var(--unsafe); } .track span.s { background:#a5d6a7; } .track span.n { background:#ddd; }
.track .head { position:absolute; top:-3px; width:2px; height:20px; background:#000; }
.diff del { background:#fde7e7; color:var(--unsafe); } .diff ins { background:#e6f4e7; color:var(--safe); text-decoration:none; }
pre.json { background:#f4f4f2; padding:8px; overflow:auto; font-size:12px; max-height:240px; }
.error { color:var(--unsafe); } .notice { background:#fff3dc; border:1px solid #f0d9a8; padding:6px 10px; border-radius:4px; margin:6px 0; }
svg.path { background:#fff; border:1px solid var(--line); }
.actions td { font-variant-numeric:tabular-nums; font-size:12px; }
@media (max-width: 900px) { .pair { grid-template-columns:1fr; } }
`;
