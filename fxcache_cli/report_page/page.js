// fxcache report: draws the page's charts from its JSON (#fxcache-data) with Vega-Lite.
// Data reaches the charts only as values (never as code, a field name or an expression);
// text is put in the DOM only as text. When every chart is drawn, <body data-charts>
// is "ready" ("failed" if one could not be drawn: the console says why).

const data = JSON.parse(document.getElementById("fxcache-data").textContent);

// Untrusted text as fxcache shows it: control and bidi characters, lone surrogates as escapes.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/g;
function shown(s) {
  if (s === null || s === undefined) return "-";
  return String(s).replace(UNSAFE, (c) => {
    const o = c.charCodeAt(0);
    if (o >= 0xdc80 && o <= 0xdcff) return "\\x" + (o - 0xdc00).toString(16).padStart(2, "0");
    return o < 0x100 ? "\\x" + o.toString(16).padStart(2, "0") : "\\u" + o.toString(16).padStart(4, "0");
  });
}

const KEPT = "kept";
const RECLAIM = "gc would reclaim";
const OUTCOMES = {
  miss: ["miss: no entry's guards hold", "#e3e6ea"],
  "other-graph": ["another graph (size specialized, duck sizing)", "#9aa3ad"],
  error: ["a guard raises", "#c62828"],
  undecided: ["undecided", "#f2c14e"],
};
const ENTRY_COLOURS = ["#4e79a7", "#59a14f", "#af7aa1", "#f28e2b", "#76b7b2", "#edc948", "#b07aa1", "#9c755f", "#ff9da7", "#86bcb6"];
// A lookup's cause (explain's) -> its words and its marker on a map.
const CALLS = {
  hit: ["hit", "circle"], "guard-miss": ["guard miss", "cross"], "new-key": ["new graph", "triangle-up"],
  "fx-entry-missing": ["its FX entry is gone", "square"], bypass: ["bypass", "diamond"],
};
const CAUSE_COLOURS = { hit: "#2f7d32", "guard-miss": "#c62828", "new-key": "#6a1b9a", bypass: "#a26b00", "fx-entry-missing": "#ef6c00" };

function mb(bytes) { return bytes / 1e6; }

function kindsSpec() {
  const values = [];
  for (const k of data.df.kinds) {
    values.push({ kind: k.label, part: KEPT, mb: mb(k.bytes - k.reclaimable.bytes) });
    if (k.reclaimable.bytes) values.push({ kind: k.label, part: RECLAIM, mb: mb(k.reclaimable.bytes) });
  }
  return barSpec(values, "kind", data.df.kinds.map((k) => k.label));
}

function functionsSpec() {
  const top = data.functions.slice(0, 20);
  const values = [];
  const names = [];
  top.forEach((f, i) => {
    const name = `${i + 1}. ${shown(f.compiled_from || f.function || "(function unknown)")}`;
    names.push(name);
    values.push({ kind: name, part: KEPT, mb: mb(f.size - f.gc_reclaimable.bytes) });
    if (f.gc_reclaimable.bytes) values.push({ kind: name, part: RECLAIM, mb: mb(f.gc_reclaimable.bytes) });
  });
  return barSpec(values, "function", names);
}

function barSpec(values, what, order) {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 380, height: { step: 18 },
    data: { values },
    mark: { type: "bar", tooltip: true },
    encoding: {
      y: { field: "kind", type: "nominal", sort: order, title: null, axis: { labelLimit: 260 } },
      x: { field: "mb", type: "quantitative", title: "MB", stack: "zero" },
      color: { field: "part", type: "nominal", title: null,
               scale: { domain: [KEPT, RECLAIM], range: ["#4e79a7", "#e15759"] } },
      order: { field: "part", sort: "descending" },
      tooltip: [{ field: "kind", title: what }, { field: "part", title: "part" },
                { field: "mb", title: "MB", format: ".3f" }],
    },
  };
}

function mapSpec(m) {
  const twoD = m.y !== null;
  const entries = new Map(); // entry -> its label, "#N name" (N: its place in torch's order, as coverage numbers it)
  const segs = [];
  for (const row of m.rows) {
    const label = twoD ? String(row.y) : "all";
    for (const g of row.coverage.segments) {
      let what;
      if (g.outcome === "hit") {
        if (!entries.has(g.entry)) entries.set(g.entry, `#${m.entries.indexOf(g.entry)} ${shown(g.entry).slice(0, 10)}`);
        what = entries.get(g.entry);
      } else {
        what = (OUTCOMES[g.outcome] || [g.outcome])[0];
      }
      segs.push({ row: label, x0: g.start, x1: g.end + 1, what, values: g.start === g.end ? `${g.start}` : `${g.start}..${g.end}`,
                  note: shown(g.note || "") });
    }
  }
  // The entries in torch's order (each its colour by that place), the other outcomes after.
  const served = m.entries.filter((e) => entries.has(e));
  const domain = served.map((e) => entries.get(e));
  const range = served.map((e) => ENTRY_COLOURS[m.entries.indexOf(e) % ENTRY_COLOURS.length]);
  for (const [, [word, colour]] of Object.entries(OUTCOMES)) {
    if (segs.some((s) => s.what === word)) { domain.push(word); range.push(colour); }
  }
  const calls = m.calls.map((c) => ({
    row: twoD ? String(c.y) : "all", x: c.x + 0.5, value: c.x,
    call: (CALLS[c.cause] || [shown(c.cause)])[0], seq: c.seq, compile: shown(c.compile),
    entry: shown(c.entry || c.wrote || "").slice(0, 16),
  }));
  const rowsOrder = twoD ? m.rows.map((r) => String(r.y)).reverse() : ["all"];
  const y = { field: "row", type: "ordinal", sort: rowsOrder, title: twoD ? shown(m.y.name) : null,
              axis: twoD ? {} : null };
  const x = { type: "quantitative", title: shown(m.x.name), scale: { domain: [m.x.start, m.x.end + 1], nice: false, zero: false } };
  const layers = [{
    data: { values: segs },
    mark: { type: "rect", tooltip: true },
    encoding: {
      x: { field: "x0", ...x }, x2: { field: "x1" }, y,
      color: { field: "what", type: "nominal", title: "served by", scale: { domain, range }, legend: { labelLimit: 320 } },
      tooltip: [{ field: "values", title: "values" }, { field: "what", title: "outcome" }, { field: "note", title: "note" }],
    },
  }];
  if (calls.length) {
    const causes = Object.keys(CALLS).filter((k) => m.calls.some((c) => c.cause === k));
    layers.push({
      data: { values: calls },
      mark: { type: "point", filled: true, size: 90, stroke: "#ffffff", strokeWidth: 1, tooltip: true },
      encoding: {
        x: { field: "x", ...x }, y,
        shape: { field: "call", type: "nominal", title: "the run's lookups",
                 scale: { domain: causes.map((k) => CALLS[k][0]), range: causes.map((k) => CALLS[k][1]) } },
        color: { value: "#111111" },
        tooltip: [{ field: "seq", title: "lookup" }, { field: "compile", title: "compile" },
                  { field: "call", title: "lookup was" }, { field: "value", title: "value" },
                  { field: "entry", title: "entry" }],
      },
    });
  }
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 560, height: twoD ? { step: 16 } : 28,
    layer: layers,
    resolve: { scale: { color: "independent", shape: "independent" } },
  };
}

function timelineSpecs() {
  const run = data.run;
  const starts = run.compiles.map((c) => c.start).filter((s) => s !== null);
  const times = run.lookups.map((x) => x.time);
  const t0 = starts.length || times.length ? Math.min(...starts, ...times) : 0;
  const compiles = run.compiles.filter((c) => c.start !== null).map((c) => ({
    compile: shown(c.compile), t0: c.start - t0, t1: c.start - t0 + (c.seconds || 0),
    seconds: c.seconds, backend: c.backend_seconds, fn: shown(c.function),
  }));
  const lookups = run.lookups.map((x) => ({
    compile: shown(x.compile || "(outside a compile)"), t: x.time - t0, cause: x.cause, seq: x.seq,
    cache: x.cache === "aotautograd" ? "aot" : "fx", key: shown(x.key || "").slice(0, 16),
    seconds: x.seconds, saved: x.seconds_saved,
  }));
  const order = [...new Set([...compiles.map((c) => c.compile), ...lookups.map((l) => l.compile)])];
  const y = { field: "compile", type: "nominal", sort: order, title: "compile" };
  const timeline = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 640, height: { step: 22 },
    layer: [
      { data: { values: compiles }, mark: { type: "bar", color: "#c9d3df", tooltip: true },
        encoding: { x: { field: "t0", type: "quantitative", title: "seconds since the run's first event" },
                    x2: { field: "t1" }, y,
                    tooltip: [{ field: "compile", title: "compile" }, { field: "fn", title: "function" },
                              { field: "seconds", title: "seconds", format: ".3f" },
                              { field: "backend", title: "backend seconds", format: ".3f" }] } },
      { data: { values: lookups }, mark: { type: "point", filled: true, size: 70, tooltip: true },
        encoding: { x: { field: "t", type: "quantitative" }, y,
                    color: { field: "cause", type: "nominal", title: "lookup",
                             scale: { domain: Object.keys(CAUSE_COLOURS), range: Object.values(CAUSE_COLOURS) } },
                    tooltip: [{ field: "seq", title: "lookup" }, { field: "cache", title: "cache" },
                              { field: "key", title: "key" }, { field: "cause", title: "cause" },
                              { field: "seconds", title: "seconds", format: ".3f" }] } },
    ],
  };
  const parts = [];
  for (const x of run.lookups) {
    const compile = `${shown(x.compile || "(outside a compile)")} ${x.cache === "aotautograd" ? "aot" : "fx"}`;
    if (x.state === "miss" && x.seconds) parts.push({ compile, part: "compile spent on a miss", seconds: x.seconds, seq: x.seq });
    if (x.state === "hit" && x.seconds_saved) parts.push({ compile, part: "saved by a hit", seconds: x.seconds_saved, seq: x.seq });
    if (x.rebuilt) parts.push({ compile, part: "kernels rebuilt", seconds: x.rebuilt.seconds, seq: x.seq });
  }
  const seconds = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 640, height: { step: 22 },
    data: { values: parts },
    mark: { type: "bar", tooltip: true },
    encoding: {
      y: { field: "compile", type: "nominal", title: "compile, cache" },
      x: { field: "seconds", type: "quantitative", title: "seconds", stack: "zero" },
      color: { field: "part", type: "nominal", title: null,
               scale: { domain: ["compile spent on a miss", "saved by a hit", "kernels rebuilt"],
                        range: ["#c62828", "#2f7d32", "#f28e2b"] } },
      tooltip: [{ field: "seq", title: "lookup" }, { field: "part", title: "part" },
                { field: "seconds", title: "seconds", format: ".3f" }],
    },
  };
  return { timeline, seconds };
}

function specFor(el) {
  switch (el.dataset.chart) {
    case "kinds": return kindsSpec();
    case "functions": return functionsSpec();
    case "map": return mapSpec(data.functions[Number(el.dataset.functionIndex)].maps[Number(el.dataset.mapIndex)]);
    case "timeline": return timelineSpecs().timeline;
    case "seconds": return timelineSpecs().seconds;
    default: throw new Error(`unknown chart ${el.dataset.chart}`);
  }
}

// A chart with no data to draw says so instead (Vega would warn of an empty extent).
function isEmpty(spec) {
  const layers = spec.layer || [spec];
  return layers.every((l) => (l.data || spec.data).values.length === 0);
}

const options = { renderer: "svg", actions: false, ast: true, tooltip: { theme: "light" } };
const drawn = [...document.querySelectorAll("[data-chart]")].map((el) =>
  Promise.resolve().then(() => {
    const spec = specFor(el);
    if (isEmpty(spec)) {
      el.textContent = "(nothing to draw)";
      el.classList.add("muted");
      return null;
    }
    return window.vegaEmbed(el, spec, options);
  }).then(() => { el.dataset.drawn = "yes"; }));
Promise.allSettled(drawn).then((results) => {
  const failed = results.filter((r) => r.status === "rejected");
  for (const f of failed) console.error("fxcache report: a chart could not be drawn:", f.reason);
  document.body.dataset.charts = failed.length ? "failed" : "ready";
});
