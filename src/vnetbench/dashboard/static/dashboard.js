// vnetbench dashboard: each page polls its JSON API and redraws; no reloads, no framework.
"use strict";

const body = document.body;
const POLL_MS = Number(body.dataset.pollMs || 2000);

// ---------------------------------------------------------------- formatting (values arrive in base units)

const SCALES = {
  "bit/s": [[1e9, "Gbit/s"], [1e6, "Mbit/s"], [1e3, "kbit/s"], [1, "bit/s"]],
  "ns": [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]],
  "packets/s": [[1e6, "Mpps"], [1e3, "kpps"], [1, "pps"]],
};

function scaleFor(unit, magnitude) {
  if (unit === "ratio") return [0.01, "%"];
  const steps = SCALES[unit];
  if (!steps) return [1, unit || ""];
  for (const step of steps) if (Math.abs(magnitude) >= step[0]) return step;
  return steps[steps.length - 1];
}

function fmt(value, unit) {
  if (value === null || value === undefined) return "–";
  const [factor, label] = scaleFor(unit, value);
  const scaled = value / factor;
  const digits = Math.abs(scaled) >= 100 ? 0 : Math.abs(scaled) >= 10 ? 1 : 2;
  return `${scaled.toFixed(digits)} ${label}`.trim();
}

function fmtCompared(cell, threshold) {
  if (cell.compared === null || cell.compared === undefined) return "";
  if (threshold.of === "value") return "";
  if (threshold.of === "expected-max" && cell.compared_as.startsWith("share")) {
    // a constant-rate flow is held against its offered rate where that is below the path's maximum
    const of = cell.compared_as.includes("offered") ? "offered" : "max";
    return `${(100 * cell.compared).toFixed(1)} % of ${of}`;
  }
  return `× ${cell.compared.toFixed(2)} of best`;
}

function fmtLevels(threshold, unit) {
  const side = threshold.higher_is_worse ? "≥" : "≤";
  const show = (v) => {
    if (threshold.of === "value") return fmt(v, unit);
    if (threshold.of === "expected-max") return `${(100 * v).toFixed(0)} %`;
    return `× ${v} of the pair's best`;
  };
  const levels = `warning ${side} ${show(threshold.warning)}, critical ${side} ${show(threshold.critical)}`;
  // the reference once, after both levels: the path's model maximum, or a constant-rate flow's offered rate
  return threshold.of === "expected-max" ? `${levels} of the expected max (or offered rate)` : levels;
}

function utc(ns) {
  if (!ns) return "–";
  return new Date(ns / 1e6).toISOString().replace("T", " ").slice(0, 19);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-") || k === "href" || k === "title" || k === "id") node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// ---------------------------------------------------------------- polling

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

function poll(url, render) {
  const updated = document.getElementById("updated");
  async function tick() {
    try {
      render(await getJSON(url));
      updated.textContent = `updated ${new Date().toISOString().slice(11, 19)} UTC`;  // as every time on the page
      updated.classList.remove("stale");
    } catch (err) {
      updated.textContent = `cannot reach the dashboard: ${err.message}`;
      updated.classList.add("stale");
    }
    setTimeout(tick, POLL_MS);
  }
  tick();
}

function progressBar(c) {
  const run = c.monitor_run;
  if (run) {
    // a monitored campaign repeats its plan run after run: steps_done / steps_total are its newest run's
    const share = c.steps_total ? Math.min(1, c.steps_done / c.steps_total) : 0;
    const bar = el("span", { class: "bar" }, el("span", { class: "fill" }));
    bar.firstChild.style.width = `${(100 * share).toFixed(1)}%`;
    const runs = c.runs === 1 ? "1 run" : `${c.runs} runs`;
    const text = `run ${run.run}: ${c.steps_done} / ${c.steps_total} · ${c.steps_stored} steps stored in ${runs}`;
    return el("span", { class: "progress", "data-done": c.steps_done, "data-total": c.steps_total,
      "data-run": run.run, "data-stored": c.steps_stored }, bar, el("span", { class: "progress-text", text }));
  }
  const total = c.steps_total;
  // a campaign stored by a monitor without its run table: more steps than one plan holds
  const openEnded = total && c.steps_done > total;
  const share = total && !openEnded ? Math.min(1, c.steps_done / total) : openEnded ? 1 : 0;
  const bar = el("span", { class: "bar" }, el("span", { class: "fill" }));
  bar.firstChild.style.width = `${(100 * share).toFixed(1)}%`;
  const text = openEnded ? `${c.steps_done} steps, run ${c.latest_repetition}`
    : total ? `${c.steps_done} / ${total}` : `${c.steps_done} / ?`;
  return el("span", { class: "progress", "data-done": c.steps_done, "data-total": total ?? "" }, bar,
    el("span", { class: "progress-text", text }));
}

function stateBadge(status) {
  return el("span", { class: `state state-${status}`, text: status });
}

// ---------------------------------------------------------------- the campaigns page

function renderCampaigns(data) {
  const tbody = document.querySelector("#campaigns tbody");
  tbody.replaceChildren();
  if (!data.campaigns.length) {
    tbody.append(el("tr", {}, el("td", { colSpan: 8, class: "muted", text: "no campaigns in this store yet" })));
    return;
  }
  for (const c of data.campaigns) {
    const report = c.report_url ? el("a", { href: c.report_url, text: "report", class: "report-link" }) : "–";
    tbody.append(el("tr", { "data-campaign": c.id },
      el("td", {}, el("a", { href: c.url, text: c.name })),
      el("td", { class: "mono", text: c.id }),
      el("td", {}, stateBadge(c.status)),
      el("td", {}, progressBar(c)),
      el("td", { text: String(c.measurements_ok) }),
      el("td", { text: String(c.attempts_failed) }),
      el("td", { text: utc(c.last_result_utc_ns) }),
      el("td", {}, report)));
  }
}

// ---------------------------------------------------------------- the campaign page: progress + grids

function seriesUrl(campaign, grid, cell) {
  const q = new URLSearchParams({
    measurement: grid.measurement, src: cell.src, dst: cell.dst, metric: grid.metric,
    contended: grid.contended ? "true" : "false",
  });
  if (cell.pattern) q.set("pattern", cell.pattern);  // the series page shows this pattern's lines first
  return `/campaigns/${campaign}/series?${q}`;
}

// A sweep's cells show the knee of its newest complete sweep, not its newest point (past capacity by design).
function sweepRule(grid) {
  const what = "a sweep's cell: the knee of its newest complete sweep (the highest offered rate received " +
    "with < 1 % loss)";
  const loss = "its worst loss at the offered rates within the path's capacity";
  if (grid.metric === "loss_ratio") return `${what}, coloured by ${loss}: ${fmtLevels(grid.threshold, grid.unit)}`;
  return `${what}, coloured by the knee against the best knee of the earlier complete sweeps: warning ≤ × 0.9, ` +
    `critical ≤ × 0.5 (the first sweep: by ${loss})`;
}

function gridName(grid) {
  const others = grid.pattern ? ` (with others: ${grid.pattern})` : " (with others)";
  return `${grid.measurement}${grid.contended ? others : ""} · ${grid.metric}`;
}

function gridKey(grid) {
  const group = grid.contended ? `contended${grid.pattern ? `:${grid.pattern}` : ""}` : "alone";
  return `${grid.measurement}/${group}/${grid.metric}`;
}

function cellContent(cell, grid) {
  if (cell.text) {  // a sweep: its knee per packet size, and what its colour compares
    const levels = cell.levels.of === "value" ? fmtLevels(cell.levels, "ratio")
      : `warning ≤ × ${cell.levels.warning}, critical ≤ × ${cell.levels.critical} of the earlier best knee`;
    const title = `${cell.src} → ${cell.dst} ${cell.pattern}: ${cell.text.join(", ")} (repetition ` +
      `${cell.repetition ?? "–"}, ${cell.count} points stored) — ${cell.compared_as}; ${levels}`;
    return [title, cell.text.map((t) => el("span", { class: "value", text: t })),
      el("span", { class: "compared", text: cell.note || "" })];
  }
  const title = `${cell.src} → ${cell.dst}: ${fmt(cell.value, grid.unit)} (repetition ${cell.repetition}, ` +
    `${cell.count} stored) — ${cell.compared_as}; ${fmtLevels(grid.threshold, grid.unit)}`;
  return [title, [el("span", { class: "value", text: fmt(cell.value, grid.unit) })],
    el("span", { class: "compared", text: fmtCompared(cell, grid.threshold) })];
}

function renderGrid(campaign, grid) {
  const byPair = new Map(grid.cells.map((c) => [`${c.src}\u0000${c.dst}`, c]));
  const name = gridName(grid);
  const table = el("table", { class: "grid" });
  const head = el("tr", {}, el("th", { class: "corner", text: "source ↓ / destination →" }));
  for (const dst of grid.destinations) head.append(el("th", { text: dst }));
  table.append(el("thead", {}, head));
  const tbody = el("tbody");
  for (const src of grid.sources) {
    const row = el("tr", {}, el("th", { text: src }));
    for (const dst of grid.destinations) {
      const cell = byPair.get(`${src}\u0000${dst}`);
      if (!cell) {
        row.append(el("td", { class: "cell empty" }));
        continue;
      }
      const [title, values, compared] = cellContent(cell, grid);
      // the level in words too: its colour is never the only sign of it
      const level = el("span", { class: "level-name", text: cell.level === "none" ? "no value" : cell.level });
      const link = el("a", { href: seriesUrl(campaign, grid, cell), title }, ...values, compared, level);
      const alerting = firing.has(`${grid.measurement}\u0000${src}\u0000${dst}`) ? " alerting" : "";
      row.append(el("td", {
        class: `cell level-${cell.level}${alerting}`, "data-src": src, "data-dst": dst, "data-level": cell.level,
      }, link));
    }
    tbody.append(row);
  }
  table.append(tbody);
  const levels = grid.sweep ? sweepRule(grid) : fmtLevels(grid.threshold, grid.unit);
  return el("section", { class: "grid-box", "data-grid": gridKey(grid) },
    el("h2", { text: name }),
    el("p", { class: "muted levels", text: levels }),
    table);
}

// The monitor adds /api/alerts to this app (alert episodes of its rules); without it there is none to show
// (the page says which: data-alerts; asking anyway would log a 404 in the browser's console).
let alertsAvailable = body.dataset.alerts !== "0";
let firing = new Set();

async function refreshAlerts(campaign) {
  if (!alertsAvailable) return;
  let episodes;
  try {
    const response = await fetch(`/api/alerts?campaign=${encodeURIComponent(campaign)}&limit=50`,
      { credentials: "same-origin", cache: "no-store" });
    if (response.status === 404) { alertsAvailable = false; return; }
    if (!response.ok) return;
    episodes = await response.json();
  } catch (err) {
    return;
  }
  firing = new Set(episodes.filter((e) => e.state === "firing").map((e) => `${e.measurement}\u0000${e.src}\u0000${e.dst}`));
  const box = document.getElementById("alerts");
  box.hidden = episodes.length === 0;
  box.replaceChildren(el("h2", { text: "alerts" }), ...episodes.map((e) => el("p",
    { class: `alert alert-${e.state} severity-${e.severity}`, "data-state": e.state },
    el("span", { class: "state", text: e.state }),
    ` ${e.severity} · ${e.rule}: ${e.condition} — ${e.measurement} ${e.src} → ${e.dst}`,
    // "(value 94.40 Mbit/s in run 2)" as the server words it (the monitor's own alert line's words)
    ...(e.detail_text ? [" ", el("span", { class: "alert-detail", text: e.detail_text })] : []))));
}

function renderCampaign(data) {
  refreshAlerts(data.campaign.id);
  const c = data.campaign;
  const progress = document.getElementById("progress");
  const report = c.report_url ? el("a", { href: c.report_url, text: "static report", class: "report-link" }) : null;
  progress.replaceChildren(stateBadge(c.status), progressBar(c),
    el("span", { class: "muted", text: ` ${c.measurements_ok} measurements ok, ${c.attempts_failed} failed attempts` +
      ` · last result ${utc(c.last_result_utc_ns)} UTC ` }), ...(report ? [report] : []));
  const problem = document.getElementById("spec-problem");
  const problems = [
    ...(data.spec_problem ? [`spec: ${data.spec_problem} (default thresholds in use)`] : []),
    ...(data.threshold_problems || []),
  ];
  problem.hidden = !problems.length;
  problem.textContent = problems.join(" · ");
  // measurements with results but no metric that has a threshold: no grid, so say so (and where to look)
  const apart = document.getElementById("without-grid");
  const without = data.without_grid || [];
  apart.hidden = !without.length;
  apart.textContent = without.map((w) => {
    const shown = w.metrics.slice(0, 4).join(", ") + (w.metrics.length > 4 ? ", …" : "");
    return `no grid for ${w.measurement}: none of its stored metrics (${shown}) has a threshold; ` +
      `set one in its thresholds: (docs/dashboard.md) or see the static report`;
  }).join(" · ");
  const grids = document.getElementById("grids");
  if (!data.grids.length) {
    const text = without.length ? "no metric with a threshold stored yet" : "no results stored yet";
    grids.replaceChildren(el("p", { class: "muted", text }));
    return;
  }
  grids.replaceChildren(...data.grids.map((g) => renderGrid(c.id, g)));
}

// ---------------------------------------------------------------- a pair's series (uPlot)

// A line is one pattern, sweep point or offered rate, and treatment (the server's `lines`): points of
// different lines are never joined, and change points are searched within each line. Past MAX_LINES the
// chart shows the first ones, or the line or pattern chosen above it, and says how many it left out.
const MAX_LINES = 7;
// One colour per line: blue, black, magenta, azure, bluish green, reddish purple, violet. Each has 3:1
// on white (WCAG's minimum for graphics) and stays apart from the failed attempts' red and from each
// other in normal vision and the three dichromacies: Okabe & Ito's colour-blind safe palette without its
// vermillion (taken for that red by a reader with deuteranopia or tritanopia), and with a magenta, an
// azure and a violet for its orange, sky blue and yellow, too faint on white (2.2:1, 2.3:1, 1.3:1). The
// same hex strings as src/vnetbench/palette.py's SERIES (the report's figures), checked by
// tests/unit/dashboard/test_palette.py.
const PALETTE = ["#0072B2", "#000000", "#840474", "#3594FF", "#009E73", "#CC79A7", "#7700CC"];
const FAILED_COLOUR = "#B71C1C";  // the table's failed rows (dashboard.css); also a ×, never the colour alone
const THRESHOLD_COLOUR = "#555555";  // palette.NEUTRAL: the warning and critical levels, dashed and named
const BAND = "0,114,178";  // the first line's blue (#0072B2) as r,g,b: its samples' band
let chart = null;
let chartLines = "";  // the shown lines the chart was built for: a new set makes a new chart
let lineChoice = null;  // "" (the first lines), "pattern:NAME" or "line:KEY"; null until the first answer

function lineName(data, line) {
  return line.label || `${data.metric}`;
}

function chooseLines(data) {
  const all = data.lines.map((line, index) => ({ ...line, index }));
  if (lineChoice === null) {  // from the grid's cell: its pattern's lines first
    const wanted = body.dataset.pattern;
    const patterns = new Set(all.map((l) => l.pattern));
    lineChoice = wanted && patterns.size > 1 && patterns.has(wanted) ? `pattern:${wanted}` : "";
  }
  let pool = all;
  if (lineChoice.startsWith("pattern:")) pool = all.filter((l) => l.pattern === lineChoice.slice(8));
  else if (lineChoice.startsWith("line:")) pool = all.filter((l) => l.key === lineChoice.slice(5));
  if (!pool.length) { lineChoice = ""; pool = all; }
  return { shown: pool.slice(0, MAX_LINES), total: all.length, pool: pool.length };
}

function renderLineChoice(data, shown, total) {
  const select = document.getElementById("line-select");
  const note = document.getElementById("lines-note");
  select.hidden = data.lines.length < 2;
  const patterns = [...new Set(data.lines.map((l) => l.pattern))];
  const options = [["", data.lines.length > MAX_LINES ? `the first ${MAX_LINES} lines` : "every line"]];
  if (patterns.length > 1) {
    for (const p of patterns) {
      const n = data.lines.filter((l) => l.pattern === p).length;
      options.push([`pattern:${p}`, `pattern ${p} (${n} line${n > 1 ? "s" : ""})`]);
    }
  }
  data.lines.forEach((line) => options.push([`line:${line.key}`, lineName(data, line)]));
  const signature = options.map((o) => o.join("=")).join("\n");
  if (select.dataset.signature !== signature) {  // rebuilt only when the lines change: keeps the choice
    select.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
    select.dataset.signature = signature;
    select.onchange = () => { lineChoice = select.value; renderSeries(chart ? chart.vnbData : data); };
  }
  select.value = lineChoice;
  const left = total - shown.length;
  note.dataset.shown = String(shown.length);
  note.dataset.left = String(left);
  note.textContent = total < 2 ? "" :
    `${total} lines: one per pattern, sweep point or offered rate and treatment, never joined` +
    (left ? `; showing ${shown.length}, ${left} left out — choose a line or pattern above` : "");
}

// One line's row for uPlot: its ok values at their times; undefined at the other lines' times, which
// uPlot joins across; null from its value before a failed attempt of its own to its value after it,
// which uPlot leaves as a gap: nothing was measured there (the table's failed row), so no line either.
function lineRow(points, index, value) {
  const row = points.map(() => undefined);
  let last = -1;
  let failed = false;
  points.forEach((p, i) => {
    if (p.line !== index) return;
    if (p.status !== "ok") { failed = true; return; }
    const v = value(p);
    if (v === null || v === undefined) return;
    if (failed) row.fill(null, last + 1, i);
    row[i] = v;
    last = i;
    failed = false;
  });
  return row;
}

function seriesData(data, factor, shown) {
  const timed = data.points.filter((p) => p.started_utc_ns !== null);
  const x = timed.map((p) => p.started_utc_ns / 1e9);
  const scale = (v) => (v === null || v === undefined ? null : v / factor);
  const rows = [x];
  for (const line of shown) rows.push(lineRow(timed, line.index, (p) => scale(p.value)));
  if (shown.length === 1) {  // one line: the band of its per-interval samples
    rows.push(lineRow(timed, shown[0].index, (p) => scale(p.sample_max)));
    rows.push(lineRow(timed, shown[0].index, (p) => scale(p.sample_min)));
  }
  return { x, rows, points: timed };
}

// Where a failed attempt of a shown line is drawn: at its time, at the level of the line's value
// before it (after it, where the line begins with one; the plot's foot where the line has none).
function failedMarks(u, points, shown) {
  const marks = [];
  shown.forEach((line, n) => {
    const row = u.data[n + 1];
    points.forEach((p, i) => {
      if (p.line !== line.index || p.status === "ok") return;
      const before = row.slice(0, i).reverse().find((v) => typeof v === "number");
      const level = before ?? row.slice(i + 1).find((v) => typeof v === "number");
      const x = u.valToPos(p.started_utc_ns / 1e9, "x", true);
      const y = level === undefined ? u.bbox.top + u.bbox.height - 8 : u.valToPos(level, "y", true);
      marks.push({ index: i, line: line.index, x, y });
    });
  });
  return marks;
}

function drawMarks(u, data, factor, shown) {
  const ctx = u.ctx;
  ctx.save();
  ctx.lineWidth = 1;
  if (data.threshold && data.threshold.of === "value") {
    // named by text, not colour: a grey dashed line each, its level written at its right end
    ctx.strokeStyle = THRESHOLD_COLOUR;
    ctx.fillStyle = THRESHOLD_COLOUR;
    ctx.font = `${11 * (window.devicePixelRatio || 1)}px system-ui, sans-serif`;
    ctx.textAlign = "right";
    for (const [level, dash] of [["warning", [6, 4]], ["critical", [2, 3]]]) {
      const y = u.valToPos(data.threshold[level] / factor, "y", true);
      if (!Number.isFinite(y)) continue;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.moveTo(u.bbox.left, y);
      ctx.lineTo(u.bbox.left + u.bbox.width, y);
      ctx.stroke();
      ctx.fillText(level, u.bbox.left + u.bbox.width - 4, y - 3);
    }
  }
  // a failed attempt: a × in the table's failed colour, in the gap it leaves in its line
  const arm = 5 * (window.devicePixelRatio || 1);
  ctx.strokeStyle = FAILED_COLOUR;
  ctx.lineWidth = 2;
  ctx.setLineDash([]);
  u.vnbFailed = failedMarks(u, u.vnbPoints, shown);
  for (const { x, y } of u.vnbFailed) {
    ctx.beginPath();
    ctx.moveTo(x - arm, y - arm);
    ctx.lineTo(x + arm, y + arm);
    ctx.moveTo(x + arm, y - arm);
    ctx.lineTo(x - arm, y + arm);
    ctx.stroke();
  }
  ctx.lineWidth = 1;
  shown.forEach((line, n) => {
    for (const index of line.change_points || []) {
      const p = data.points[index];
      if (!p || !p.started_utc_ns) continue;
      const x = u.valToPos(p.started_utc_ns / 1e9, "x", true);
      ctx.strokeStyle = shown.length === 1 ? "#000000" : PALETTE[n % PALETTE.length];  // one line: black on blue
      ctx.setLineDash([2, 3]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
    }
  });
  ctx.restore();
}

// The x axis in UTC, as the table beside it ("started (UTC)"), one line per tick: uPlot's default labels
// are the browser's local time, and its two-line date labels ran into each other ("4:52am4:53am").
function timeLabels(u, splits) {
  const span = u.scales.x.max - u.scales.x.min;
  return splits.map((s) => {
    const iso = new Date(s * 1000).toISOString();
    if (span > 86400) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    return span > 1800 ? iso.slice(11, 16) : iso.slice(11, 19);
  });
}

function changePointText(data, shown) {
  const needed = data.min_points_for_change || 10;
  const one = (line) => line.change_points === null ? `too few runs to look for any (${needed} needed)`
    : line.change_points.length
      ? line.change_points.map((i) => `repetition ${data.points[i].repetition}`).join(", ") : "none";
  if (data.lines.length === 1) return `change points: ${one(data.lines[0])}`;
  const head = "change points, searched within each line";
  if (shown.length === 1) return `${head}: ${lineName(data, shown[0])}: ${one(shown[0])}`;
  // the lines shown with a change by name; those without one, or too short to search, counted
  const found = shown.filter((l) => l.change_points && l.change_points.length);
  const none = shown.filter((l) => l.change_points && !l.change_points.length).length;
  const short = shown.filter((l) => l.change_points === null).length;
  const parts = found.map((line) => `${lineName(data, line)}: ${one(line)}`);
  if (none) parts.push(`none in ${none} line${none > 1 ? "s" : ""}`);
  if (short) parts.push(`${short} line${short > 1 ? "s" : ""} with too few runs to look (${needed} needed)`);
  return `${head}: ${parts.join("; ")}`;
}

function renderSeries(data) {
  const magnitude = Math.max(0, ...data.points.map((p) => Math.abs(p.value || 0)));
  const [factor, label] = scaleFor(data.unit, magnitude);
  const { shown, total } = chooseLines(data);
  renderLineChoice(data, shown, total);
  const { rows, points } = seriesData(data, factor, shown);
  const box = document.getElementById("chart");
  box.dataset.points = String(points.length);
  box.dataset.lines = String(shown.length);
  const signature = shown.map((l) => `${l.index}:${l.label}`).join("\n") + `|${label}`;
  if (!chart || chartLines !== signature) {
    if (chart) chart.destroy();
    const series = [{}];
    shown.forEach((line, n) => series.push({
      label: shown.length === 1 && data.lines.length === 1 ? `${data.metric} (${label})` : lineName(data, line),
      stroke: PALETTE[n % PALETTE.length], width: 2, points: { show: true, size: 7 },
      spanGaps: false,  // a gap at its null (a failed attempt); undefined (another line's time) is joined
    }));
    const bands = [];
    if (shown.length === 1) {
      series.push({ label: "sample max", stroke: `rgba(${BAND},0.35)`, dash: [4, 4], spanGaps: false });
      series.push({ label: "sample min", stroke: `rgba(${BAND},0.35)`, dash: [4, 4], spanGaps: false });
      bands.push({ series: [2, 3], fill: `rgba(${BAND},0.10)` });
    }
    chart = new uPlot({
      width: Math.max(480, box.clientWidth || 900),
      height: 360,
      scales: { x: { time: true } },
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),  // the legend's time, too
      series,
      bands,
      axes: [{ label: "started (UTC)", values: timeLabels, space: 90 }, { label, size: 70 }],
      hooks: { draw: [(u) => u.vnbData && drawMarks(u, u.vnbData, u.vnbFactor, u.vnbShown)] },
    }, rows, box);
    chartLines = signature;
  } else {
    chart.setData(rows);
  }
  chart.vnbData = data;
  chart.vnbPoints = points;
  chart.vnbFactor = factor;
  chart.vnbShown = shown;
  chart.redraw(false, false);
  document.getElementById("changepoints").textContent = changePointText(data, shown);
  renderRepetitions(data);
}

// What tells a pair's points apart besides the repetition: the pattern that measured it (a pair may be
// in several: alone, with background traffic, ...), the offered rate (a sweep's points) and the treatment
// (a designed experiment's factors). A column appears only where it varies, so a plain series stays narrow.
const treatment = (p) => Object.entries(p.factors || {}).map(([k, v]) => `${k}=${v}`).join(" ");
const POINT_COLUMNS = [
  ["pattern", "pattern", (p) => p.pattern || "–"],
  ["offered", "offered", (p) => fmt(p.offered_bps, "bit/s")],
  ["treatment", "treatment", (p) => treatment(p) || "–"],
];

function renderRepetitions(data) {
  const columns = POINT_COLUMNS.filter(([, , show]) => new Set(data.points.map(show)).size > 1);
  const head = document.querySelector("#repetitions thead tr");
  head.replaceChildren(...["repetition", "attempt", ...columns.map(([, title]) => title), "started (UTC)",
    "status", "value", "samples", "sample min", "sample mean", "sample max"].map((t) => el("th", { text: t })));
  const tbody = document.querySelector("#repetitions tbody");
  tbody.replaceChildren(...data.points.map((p) => el("tr", { "data-status": p.status, "data-line": p.line },
    el("td", { text: String(p.repetition) }),
    el("td", { text: String(p.attempt) }),
    ...columns.map(([key, , show]) => el("td", { text: show(p), "data-column": key })),
    el("td", { text: utc(p.started_utc_ns) }),
    el("td", { text: p.status }),
    el("td", { text: fmt(p.value, data.unit) }),
    el("td", { text: String(p.samples) }),
    el("td", { text: fmt(p.sample_min, data.unit) }),
    el("td", { text: fmt(p.sample_mean, data.unit) }),
    el("td", { text: fmt(p.sample_max, data.unit) }))));
}

// ---------------------------------------------------------------- start

if (body.dataset.page === "campaigns") {
  poll("/api/campaigns", renderCampaigns);
} else if (body.dataset.page === "campaign") {
  poll(`/api/campaigns/${body.dataset.campaign}`, renderCampaign);
} else if (body.dataset.page === "series") {
  const q = new URLSearchParams({
    measurement: body.dataset.measurement, src: body.dataset.src, dst: body.dataset.dst,
    metric: body.dataset.metric, contended: body.dataset.contended,
  });
  poll(`/api/campaigns/${body.dataset.campaign}/series?${q}`, renderSeries);
}
