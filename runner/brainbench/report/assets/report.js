/* BrainBench report: scoreboard → cell → turn, filters and plots, from the inlined JSON.
   Text from seams is hostile: it is only ever set through text nodes, never as HTML. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var HARNESSES = uniq(DATA.cells.map(function (c) { return c.harness; }).concat(DATA.turns.map(function (t) { return t.harness; })));
  var SUITES = uniq(DATA.cells.map(function (c) { return c.suite; }));
  var VERDICTS = ["budget", "suppressed", "unresolvable", "not_injected", "fault", "other_source", "wrong_page",
                  "false_fire", "injected", "quiet"];
  var COLORS = {"openclaw": "#0550ae", "claude-code": "#8250df", "codex": "#bc4c00"};
  var state = {harness: "", suite: "", verdict: ""};
  var charts = [];
  var lastCell = "";
  var turnIndex = {};
  DATA.turns.forEach(function (t) { turnIndex[t.harness + "/" + t.fixture_id + "/" + t.turn_id] = t; });

  function uniq(xs) { var s = []; xs.forEach(function (x) { if (s.indexOf(x) < 0) s.push(x); }); return s; }
  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "class") node.className = attrs[k]; else node.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function add(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(node, c); }); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function link(hash, text, label) {
    var a = el("a", {href: "#" + hash}, text);
    if (label) a.setAttribute("aria-label", label);
    return a;
  }
  function badge(verdict) { return el("span", {"class": "badge v-" + verdict}, verdict.replace("_", " ")); }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    return typeof v === "number" ? String(Math.round(v * 10000) / 10000) : String(v);
  }
  function keep(harness, suite) {
    return (!state.harness || state.harness === harness) && (!state.suite || !suite || state.suite === suite);
  }
  function verdictOk(verdict) {
    if (!state.verdict) return true;
    if (state.verdict === "failing") return ["injected", "quiet"].indexOf(verdict) < 0;
    return state.verdict === verdict;
  }
  function turnFails(t) { return t.verdicts.some(function (v) { return v.verdict !== "injected" && v.verdict !== "quiet"; }); }
  function turnKey(t) { return t.harness + "/" + t.fixture_id + "/" + t.turn_id; }

  // --- header: receipt and filters ------------------------------------------------------
  function header() {
    var r = DATA.receipt;
    var run = DATA.run;
    document.getElementById("receipt").textContent = "fixtures " + r.fixtures_hash.slice(0, 12) + " · " + r.ts +
      " · harness " + r.harness_sha.slice(0, 10) + (run ? " · executor " + run.executor + " · run " + run.run_id : "") +
      (r.include_holdout ? " · holdout included" : " · holdout excluded") +
      (DATA.baseline ? " · compared with a " + DATA.baseline.kind : "");
    var nav = document.getElementById("filters");
    nav.textContent = "";
    nav.appendChild(select("harness", "Harness", [""].concat(HARNESSES)));
    nav.appendChild(select("suite", "Suite", [""].concat(SUITES)));
    nav.appendChild(select("verdict", "Verdict", ["", "failing"].concat(VERDICTS)));
  }
  function select(name, label, options) {
    var id = "filter-" + name;
    var s = el("select", {id: id, name: name});
    options.forEach(function (o) { s.appendChild(el("option", {value: o}, o || "all")); });
    s.value = state[name];
    s.addEventListener("change", function () { state[name] = s.value; route(); });
    return el("span", {}, el("label", {"for": id}, label + " "), s);
  }

  // --- views ------------------------------------------------------------------------------
  function overview(main) {
    main.appendChild(el("h2", {id: "scoreboard"}, "Scoreboard"));
    main.appendChild(el("p", {"class": "muted"},
      "Click a cell's failed/gold count to see its failing items and their reasons; click an item for the turn."));
    var head = ["harness", "seam", "suite", "failed/gold", "headline metric"];
    if (DATA.baseline) head.push("vs baseline");
    var table = el("table", {id: "scoreboard-table"}, el("thead", {}, el("tr", {}, head.map(function (h) {
      return el("th", {scope: "col"}, h); }))));
    var body = el("tbody");
    DATA.cells.filter(function (c) { return keep(c.harness, c.suite); }).forEach(function (c) {
      var row = el("tr", {"class": c.gold_failed ? "failing" : ""},
        el("td", {}, c.harness), el("td", {}, c.seam), el("td", {}, c.suite),
        el("td", {"class": "num"}, link("cell=" + c.key, c.gold_failed + "/" + c.gold_total,
                                          c.key + ": " + c.gold_failed + " of " + c.gold_total + " gold items failed")),
        el("td", {}, c.headline && c.metrics[c.headline] !== undefined ? c.headline + " = " + fmt(c.metrics[c.headline]) : "—"));
      if (DATA.baseline) {
        var b = DATA.baseline.cells[c.key];
        var text = "new cell";
        if (b && b.failed !== null && b.failed !== undefined) {
          var d = c.gold_failed - b.failed;
          text = d === 0 ? "= (" + b.failed + " failed)" : (d > 0 ? "+" : "") + d + " failed (was " + b.failed + ")";
        }
        row.appendChild(el("td", {}, text));
      }
      body.appendChild(row);
    });
    (DATA.not_applicable || []).filter(function (n) { return keep(n.harness, n.suite); }).forEach(function (n) {
      var seam = ((DATA.run && DATA.run.seams) || []).filter(function (s) { return s.harness === n.harness; });
      var row = el("tr", {"class": "not-applicable"}, el("td", {}, n.harness),
        el("td", {}, seam.length ? seam[0].seam : "production"), el("td", {}, n.suite),
        el("td", {"class": "num"}, "n/a"), el("td", {}, "not applicable: " + n.reason));
      if (DATA.baseline) row.appendChild(el("td", {}, "not scored"));
      body.appendChild(row);
    });
    table.appendChild(body);
    main.appendChild(table);
    if (DATA.baseline) baselineSection(main);
    failingList(main, DATA.failed, "Failing gold items", "failing-items");
    plots(main);
    faults(main, DATA.turns);
    if (DATA.seed_failures.length) {
      main.appendChild(el("h2", {id: "seed-failures"}, "Seed failures (" + DATA.seed_failures.length + "): the run is invalid"));
      main.appendChild(el("ul", {"class": "items"}, DATA.seed_failures.map(function (f) {
        return el("li", {}, el("code", {}, f.fixture_id), " " + f.error); })));
    }
  }

  function failingList(main, items, title, id) {
    var shown = items.filter(function (f) { return keep(f.harness, f.cell.split("/")[1]) && verdictOk(f.verdict); });
    main.appendChild(el("h2", {id: id}, title + " (" + shown.length + ")"));
    if (!shown.length) { main.appendChild(el("p", {"class": "muted"}, "None.")); return; }
    var ul = el("ul", {"class": "items"});
    shown.slice(0, 400).forEach(function (f) {
      ul.appendChild(el("li", {}, el("code", {}, f.cell), " ",
        link("turn=" + f.harness + "/" + f.fixture + "/" + f.turn, f.item), " ", badge(f.verdict), " ",
        el("span", {"class": "reason"}, f.reason)));
    });
    main.appendChild(ul);
    if (shown.length > 400) main.appendChild(el("p", {"class": "muted"}, (shown.length - 400) + " more not shown; narrow the filters."));
  }

  function baselineSection(main) {
    main.appendChild(el("h2", {id: "baseline"}, "Against the baseline"));
    var plot = el("div", {"class": "plot"}, el("h3", {}, "Change in failed gold items per cell"),
      el("canvas", {id: "plot-delta", role: "img", "aria-label": "Bar chart: failed items now minus baseline, per cell"}));
    main.appendChild(plot);
    var keys = DATA.cells.filter(function (c) { return keep(c.harness, c.suite); }).map(function (c) { return c.key; });
    var deltas = keys.map(function (k) {
      var c = DATA.cells.filter(function (x) { return x.key === k; })[0];
      var b = DATA.baseline.cells[k];
      return b && b.failed !== null && b.failed !== undefined ? c.gold_failed - b.failed : 0;
    });
    chart("plot-delta", "bar", keys, [{label: "Δ failed", data: deltas,
      backgroundColor: deltas.map(function (d) { return d > 0 ? "#a40e26" : (d < 0 ? "#116329" : "#6e7781"); })}]);
    failingList(main, DATA.baseline.newly_failed, "Newly failed items", "newly-failed");
  }

  function faults(main, turns) {
    var faulted = turns.filter(function (t) { return t.fault_class && keep(t.harness, null); });
    if (!faulted.length) return;
    main.appendChild(el("h2", {id: "faults"}, "Faults (" + faulted.length + ")"));
    var ul = el("ul", {"class": "items"});
    faulted.forEach(function (t) {
      ul.appendChild(el("li", {}, link("turn=" + turnKey(t), t.harness + " · " + t.fixture_id + "#" + t.turn_id), " ",
        badge("fault"), " " + t.fault_class + ": " + t.fault_detail));
    });
    main.appendChild(ul);
  }

  function cellView(main, key) {
    var c = DATA.cells.filter(function (x) { return x.key === key; })[0];
    main.appendChild(el("div", {"class": "crumbs"}, link("", "Scoreboard"), " › " + key));
    if (!c) { main.appendChild(el("p", {}, "No cell " + key + " in this result.")); return; }
    main.appendChild(el("h2", {id: "cell-title"}, key + " · " + c.seam + " · " + c.gold_failed + "/" + c.gold_total + " failed"));
    var dl = el("dl", {"class": "facts"});
    Object.keys(c.metrics).forEach(function (m) {
      dl.appendChild(el("dt", {title: DATA.glossary[m] || ""}, m)); dl.appendChild(el("dd", {}, fmt(c.metrics[m])));
    });
    main.appendChild(dl);
    var trust = (DATA.trust_items || []).filter(function (i) { return i.cell === key; });
    if (trust.length) { trustItems(main, trust); return; }
    failingList(main, DATA.failed.filter(function (f) { return f.cell === key; }), "Failing items in this cell", "cell-failing");
    var turns = DATA.turns.filter(function (t) { return t.harness === c.harness && t.suites.indexOf(c.suite) >= 0; });
    main.appendChild(el("h2", {id: "cell-fixtures"}, "Fixtures and turns"));
    if (!turns.length) { main.appendChild(el("p", {"class": "muted"}, "No traced turns (write-back is scored from the stored page, not turns).")); return; }
    var table = el("table", {}, el("thead", {}, el("tr", {}, ["fixture", "turn", "verdicts", "injected", "tokens", "ms"].map(function (h) {
      return el("th", {scope: "col"}, h); }))));
    var body = el("tbody");
    turns.forEach(function (t) {
      var vs = t.verdicts.filter(function (v) { return verdictOk(v.verdict); });
      if (state.verdict && !vs.length) return;
      body.appendChild(el("tr", {"class": turnFails(t) ? "failing" : ""}, el("td", {}, t.fixture_id),
        el("td", {}, link("turn=" + turnKey(t), "#" + t.turn_id, t.fixture_id + " turn " + t.turn_id)),
        el("td", {}, t.verdicts.map(function (v) { return [badge(v.verdict), " "]; })),
        el("td", {}, t.injected_slugs.join(", ") || "—"), el("td", {"class": "num"}, fmt(t.injected_tokens)),
        el("td", {"class": "num"}, fmt(t.latency_ms))));
    });
    table.appendChild(body);
    main.appendChild(table);
  }

  // A memory-trust cell: one row per gold item (failing first), with the step, the stored row and the reads.
  function trustItems(main, items) {
    var failing = items.filter(function (i) { return !i.passed; });
    main.appendChild(el("h2", {id: "cell-trust-items"}, "Gold items (" + failing.length + " failing of " + items.length + ")"));
    var table = el("table", {id: "trust-items"}, el("thead", {}, el("tr", {}, ["fixture", "item", "arm", "verdict", "step", "stored", "reads", "why"].map(function (h) {
      return el("th", {scope: "col"}, h); }))));
    var body = el("tbody");
    failing.concat(items.filter(function (i) { return i.passed; })).forEach(function (i) {
      var reads = Object.keys(i.surfaces || {}).map(function (k) { return k + ": " + i.surfaces[k]; }).join(", ");
      body.appendChild(el("tr", {"class": i.passed ? "" : "failing"}, el("td", {}, i.fixture),
        el("td", {}, el("code", {}, i.item + " " + i.check + "@" + i.step)), el("td", {}, i.arm),
        el("td", {}, el("span", {"class": "badge v-" + (i.passed ? "quiet" : "fault")}, i.passed ? "pass" : "fail")), el("td", {}, i.outcome),
        el("td", {}, i.stored || "no row"), el("td", {}, reads || "—"),
        el("td", {"class": "reason"}, (i.reasons.length ? i.reasons : ["as expected"]).join("; "))));
    });
    table.appendChild(body);
    main.appendChild(table);
  }

  function highlighted(text, slugs) {
    var pre = el("pre", {"class": "context", tabindex: "0", "aria-label": "Injected context"});
    var pattern = slugs.filter(Boolean).map(function (s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("|");
    if (!pattern) { pre.textContent = text; return pre; }
    var re = new RegExp(pattern, "g"), last = 0, m;
    while ((m = re.exec(text)) !== null) {
      add(pre, text.slice(last, m.index));
      pre.appendChild(el("mark", {}, m[0]));
      last = m.index + m[0].length;
    }
    add(pre, text.slice(last));
    return pre;
  }

  function turnView(main, key) {
    var t = turnIndex[key];
    var parts = key.split("/");
    if (!t) { main.appendChild(el("p", {}, "No traced turn " + key + ".")); return; }
    // Back to the cell the reader came from, else the push cell (per-page verdicts), else the first.
    var suite = [lastCell.split("/")[1], "push", "know-to-ask"].filter(function (s) {
      return lastCell.indexOf(t.harness + "/") === 0 || s !== lastCell.split("/")[1]; }).filter(function (s) {
      return t.suites.indexOf(s) >= 0; })[0] || t.suites[0];
    main.appendChild(el("div", {"class": "crumbs"}, link("", "Scoreboard"), " › ",
      link("cell=" + t.harness + "/" + suite, t.harness + "/" + suite), " › " + t.fixture_id + "#" + t.turn_id));
    main.appendChild(el("h2", {id: "turn-title"}, t.harness + " · " + t.fixture_id + " · turn " + t.turn_id));
    var g = t.gold;
    var gold = !g ? "none for this turn" : (g.should_retrieve ? "retrieve " + (g.gold_slugs || []).join(", ") +
      (g.acceptable_slugs && g.acceptable_slugs.length ? " (acceptable: " + g.acceptable_slugs.join(", ") + ")" : "") : "stay quiet");
    var dl = el("dl", {"class": "facts"});
    function fact(k, v) { dl.appendChild(el("dt", {}, k)); dl.appendChild(el("dd", {}, v)); }
    fact("prompt", t.prompt);
    fact("prior context", t.prior_messages + " earlier message(s), " + t.prior_injections + " earlier injection(s) by this seam");
    var earlier = DATA.turns.filter(function (o) {
      return o.harness === t.harness && o.fixture_id === t.fixture_id && o.turn_id < t.turn_id; });
    if (earlier.length) {
      fact("earlier turns", el("ul", {"class": "items"}, earlier.map(function (o) {
        return el("li", {}, link("turn=" + turnKey(o), "#" + o.turn_id), " “" + o.prompt + "” → ",
          o.injected_slugs.length ? o.injected_slugs.join(", ") : "(silence)"); })));
    }
    fact("gold", gold);
    fact("suites", t.suites.join(", "));
    if (t.image) fact("image", t.image);
    fact("wire", (t.exit_code === null ? "no exit code" : "exit " + t.exit_code) + " · " + fmt(t.latency_ms) + " ms · " +
      t.injected_tokens + " tokens · " + t.context_chars + " characters" + (t.timed_out ? " · timed out" : ""));
    if (t.fault_class) fact("fault", [badge("fault"), " " + t.fault_class + ": " + t.fault_detail]);
    main.appendChild(dl);
    main.appendChild(el("h3", {}, "Verdicts and reasons"));
    var vt = el("table", {id: "verdicts"}, el("thead", {}, el("tr", {}, ["item", "verdict", "reason"].map(function (h) {
      return el("th", {scope: "col"}, h); }))));
    var vb = el("tbody");
    t.verdicts.forEach(function (v) {
      vb.appendChild(el("tr", {"class": v.verdict === "injected" || v.verdict === "quiet" ? "" : "failing"},
        el("td", {}, el("code", {}, v.slug || "(turn)")), el("td", {}, badge(v.verdict)), el("td", {"class": "reason"}, v.reason)));
    });
    vt.appendChild(vb);
    main.appendChild(vt);
    main.appendChild(el("h3", {}, "Injected context" + (t.context && t.context_chars > t.context.length ? " (cut at " + t.context.length + " of " + t.context_chars + " characters)" : "")));
    var wanted = g ? (g.gold_slugs || []).concat(g.acceptable_slugs || []) : [];
    main.appendChild(t.context ? highlighted(t.context, wanted) : el("p", {"class": "muted"}, "(silence: nothing injected)"));
    if (t.reference) {
      main.appendChild(el("h3", {}, "Reference reflex on the same brain (budget " + t.budget + ")"));
      var rt = el("table", {}, el("thead", {}, el("tr", {}, ["rank", "page", "rule", "matched", "fate"].map(function (h) {
        return el("th", {scope: "col"}, h); }))));
      var rb = el("tbody");
      t.reference.forEach(function (p) {
        rb.appendChild(el("tr", {}, el("td", {"class": "num"}, p.rank === null ? "—" : p.rank), el("td", {}, el("code", {}, p.slug)),
          el("td", {}, p.rule), el("td", {}, p.matched), el("td", {}, p.fate.replace("_", " "))));
      });
      rt.appendChild(rb);
      main.appendChild(rt);
    }
    if (t.stderr_tail) { main.appendChild(el("h3", {}, "stderr (tail)")); main.appendChild(el("pre", {"class": "context"}, t.stderr_tail)); }
    var others = HARNESSES.filter(function (h) { return h !== t.harness && turnIndex[h + "/" + parts.slice(1).join("/")]; });
    if (others.length) {
      main.appendChild(el("p", {}, "Same turn in: ", others.map(function (h) {
        return [link("turn=" + h + "/" + parts.slice(1).join("/"), h), " "]; })));
    }
  }

  // --- plots (Chart.js, vendored) ----------------------------------------------------------
  function chart(id, type, labels, datasets, extra) {
    var canvas = document.getElementById(id);
    if (!canvas || typeof Chart === "undefined") return;
    var options = {animation: false, responsive: true, maintainAspectRatio: false,
                   plugins: {legend: {position: "bottom"}}, scales: {y: {beginAtZero: true}}};
    Object.keys(extra || {}).forEach(function (k) { options[k] = extra[k]; });
    charts.push(new Chart(canvas, {type: type, data: {labels: labels, datasets: datasets}, options: options}));
  }
  function histogram(values, edges) {
    var counts = edges.slice(0, -1).map(function () { return 0; });
    values.forEach(function (v) {
      for (var i = 0; i < edges.length - 1; i++) {
        if (v >= edges[i] && (v < edges[i + 1] || i === edges.length - 2)) { counts[i]++; break; }
      }
    });
    return counts;
  }
  function plots(main) {
    main.appendChild(el("h2", {id: "plots"}, "Plots"));
    var grid = el("div", {"class": "plots"});
    function box(id, title, label) {
      grid.appendChild(el("div", {"class": "plot"}, el("h3", {}, title), el("canvas", {id: id, role: "img", "aria-label": label})));
    }
    box("plot-cells", "Gold items passed per cell, by harness", "Grouped bars: share of gold items passed per suite and harness");
    box("plot-tokens", "Injected tokens per turn", "Histogram of injected tokens per turn, by harness");
    box("plot-latency", "Hook latency per turn (ms)", "Histogram of hook latency per turn in milliseconds, by harness");
    main.appendChild(grid);
    var harnesses = HARNESSES.filter(function (h) { return keep(h, null); });
    var suites = SUITES.filter(function (s) { return !state.suite || s === state.suite; });
    chart("plot-cells", "bar", suites, harnesses.map(function (h) {
      return {label: h, backgroundColor: COLORS[h] || "#555", data: suites.map(function (s) {
        var c = DATA.cells.filter(function (x) { return x.harness === h && x.suite === s; })[0];
        return c && c.gold_total ? Math.round((1 - c.gold_failed / c.gold_total) * 1000) / 10 : null;
      })};
    }), {scales: {y: {beginAtZero: true, max: 100, title: {display: true, text: "% passed"}}}});
    var turns = DATA.turns.filter(function (t) { return keep(t.harness, null); });
    var maxTok = Math.max.apply(null, [10].concat(turns.map(function (t) { return t.injected_tokens; })));
    var step = Math.max(10, Math.ceil(maxTok / 12 / 10) * 10);
    var tokEdges = []; for (var e = 0; e <= maxTok + step; e += step) tokEdges.push(e);
    chart("plot-tokens", "bar", tokEdges.slice(0, -1).map(function (e) { return e + "–" + (e + step - 1); }),
      harnesses.map(function (h) { return {label: h, backgroundColor: COLORS[h] || "#555", data: histogram(
        turns.filter(function (t) { return t.harness === h; }).map(function (t) { return t.injected_tokens; }), tokEdges)}; }));
    var latEdges = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 1e9];
    chart("plot-latency", "bar", latEdges.slice(0, -1).map(function (e, i) {
      return i === latEdges.length - 2 ? "≥" + e : e + "–" + latEdges[i + 1]; }),
      harnesses.map(function (h) { return {label: h, backgroundColor: COLORS[h] || "#555", data: histogram(
        turns.filter(function (t) { return t.harness === h; }).map(function (t) { return t.latency_ms; }), latEdges)}; }));
  }

  // --- routing ---------------------------------------------------------------------------
  function route() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var main = document.getElementById("main");
    main.textContent = "";
    var hash = decodeURIComponent(location.hash.slice(1));
    if (hash.indexOf("cell=") === 0) { lastCell = hash.slice(5); cellView(main, lastCell); }
    else if (hash.indexOf("turn=") === 0) turnView(main, hash.slice(5));
    else overview(main);
    if (hash && hash !== "main") { var h2 = main.querySelector("h2"); if (h2) { h2.setAttribute("tabindex", "-1"); h2.focus(); } }
  }
  window.addEventListener("hashchange", route);
  header();
  route();
})();
