/** Shared pieces of Provael's static HTML pages: escaping, the stylesheet and the page frame. */

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Colours by role, used by every chart so a reader learns them once. */
export const ROLE_COLOURS = {
  baseline: "#475569",
  control: "#0f766e",
  treatment: "#c2410c",
} as const;

export const BASE_CSS = `
:root { --ink:#0f172a; --muted:#475569; --faint:#94a3b8; --line:#e2e8f0; --bg:#f8fafc;
  --card:#ffffff; --accent:#c2410c; --ok:#15803d; --warn:#b45309; --bad:#b91c1c; --ctl:#0f766e; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 56px; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 36px 0 10px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p { margin: 6px 0; }
.sub { color: var(--muted); margin: 0 0 18px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 12px; }
.metric .label { color: var(--muted); font-size: 13px; }
.metric .value { font-size: 30px; font-weight: 650; font-variant-numeric: tabular-nums; }
.metric .detail { color: var(--muted); font-size: 13px; font-variant-numeric: tabular-nums; }
.metric.attack .value { color: var(--accent); }
.metric.floor .value { color: #334155; }
.metric.control .value { color: var(--ctl); }
.callout { border-left: 4px solid var(--warn); background: #fffbeb; padding: 8px 12px; border-radius: 6px; margin: 12px 0; }
.callout.info { border-left-color: #2563eb; background: #eff6ff; }
.muted { color: var(--muted); }
.small { font-size: 13px; }
table { border-collapse: collapse; width: 100%; background: var(--card); font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); background: #f1f5f9; }
td.num, th.num { text-align: right; }
tr.control td:first-child { padding-left: 26px; color: var(--ctl); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.badge.treatment { background: #ffedd5; color: #9a3412; }
.badge.control { background: #ccfbf1; color: #115e59; }
.badge.baseline { background: #e2e8f0; color: #334155; }
.badge.error { background: #fee2e2; color: #991b1b; }
.badge.warning { background: #fef3c7; color: #92400e; }
.badge.note { background: #e0f2fe; color: #075985; }
.badge.ok { background: #dcfce7; color: #166534; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 14px; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; background: #f1f5f9; padding: 1px 4px; border-radius: 4px; word-break: break-all; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--line); padding-top: 12px; }
`;

/**
 * A complete HTML document: no scripts, no external resources; `media`: the page may play
 * media files from its own folder (report.html's showcase clip, `clips/showcase.webm`).
 */
export function htmlPage(
  title: string,
  body: string,
  extraCss = "",
  options: { media?: boolean } = {},
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:;${options.media ? " media-src 'self';" : ""} style-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${BASE_CSS}${extraCss}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
