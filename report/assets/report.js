// hmbtrace report: the sortable tables, the profile and the timeline. Plain
// ES2017, no libraries, nothing fetched: the page works from file://.
"use strict";

// Errors are collected for the self-check at the end (and for a test that
// reads the page's DOM): uncaught ones, rejected promises, console.error.
var reportErrors = [];
window.addEventListener("error", function (e) {
  reportErrors.push(String(e.message || e.error || "error") + (e.lineno ? " (line " + e.lineno + ")" : ""));
});
window.addEventListener("unhandledrejection", function (e) { reportErrors.push("unhandled rejection: " + String(e.reason)); });
(function () {
  var consoleError = console.error;
  console.error = function () {
    reportErrors.push(Array.prototype.join.call(arguments, " "));
    consoleError.apply(console, arguments);
  };
})();

// writeSelfCheck puts the page's own verdict into the DOM, where a test
// that dumps the DOM finds it.
function writeSelfCheck(check) {
  check.errors = reportErrors;
  check.ok = reportErrors.length === 0;
  document.getElementById("selfcheck").textContent = JSON.stringify(check);
  document.body.setAttribute("data-selfcheck", check.ok ? "ok" : "failed");
}

try {
  runReport();
} catch (e) {
  // On the console (which records it for the self-check too) and on the
  // page, where a reader looks.
  console.error("hmbtrace report: " + String(e && e.stack || e));
  var statusLine = document.getElementById("tl-status");
  if (statusLine) statusLine.textContent = "The page could not be drawn: " + String(e && e.message || e);
  writeSelfCheck({ sections: {}, timeline: {}, probes: [] });
}

function runReport() {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var regions = data.regions;
  // The regions' names shortened as summary shows them, at a few widths
  // (report.go's shortWidths): the function's own name kept, different
  // names different.
  var shortNames = data.short || [];

  // ---- formatting ------------------------------------------------------

  function count(n) {
    if (n === null || n === undefined) return "-";
    return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function dur(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + " µs";
    return ns.toFixed(1) + " ns";
  }
  function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "-"; }
  function escapeHTML(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // Region colours by paradigm, as Vampir has them: MPI red, OpenMP
  // orange, I/O yellow, Go's runtime grey, each region of a paradigm a
  // shade of its colour; the program's own regions take hues a golden angle
  // apart between green and violet, never red. The paradigms' names and
  // colours come from the page's data (paradigm.go in package report).
  var kinds = data.kinds || [], paradigms = data.paradigms || [];
  var regionRGB = (function () {
    var nth = paradigms.map(function () { return 0; });
    var base = [[0, 0.72, 0.5], [30, 0.78, 0.5], [54, 0.9, 0.42], [0, 0, 0.55]];
    return regions.map(function (_, i) {
      var k = kinds[i] || 0, j = nth[k]++;
      if (k === 0) return hslToRGB(80 + (j * 137.508) % 210, 0.5, 0.5 + 0.08 * ((j % 3) - 1));
      var b = base[k - 1] || [0, 0, 0.5];
      // Shades: lightness steps around the paradigm's own.
      return hslToRGB(b[0], b[1], b[2] + 0.07 * [0, 1, -1, 2, -2][j % 5]);
    });
  })();
  function hslToRGB(h, s, l) {
    var c = (1 - Math.abs(2 * l - 1)) * s, x = c * (1 - Math.abs((h / 60) % 2 - 1)), m = l - c / 2;
    var r = 0, g = 0, b = 0;
    if (h < 60) { r = c; g = x; } else if (h < 120) { r = x; g = c; } else if (h < 180) { g = c; b = x; }
    else if (h < 240) { g = x; b = c; } else if (h < 300) { r = x; b = c; } else { r = c; b = x; }
    return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
  }
  function regionCSS(i, alpha) {
    var c = regionRGB[i] || [128, 128, 128];
    return "rgba(" + c[0] + "," + c[1] + "," + c[2] + "," + alpha + ")";
  }

  // ---- sortable tables -------------------------------------------------

  // A click on a header sorts the body by that column: by data-v where the
  // cells have it (numbers), else by text. A second click reverses.
  function makeSortable(table, onSort) {
    var head = table.tHead;
    if (!head) return;
    Array.prototype.forEach.call(head.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () {
        var desc = th.getAttribute("aria-sort") !== "descending";
        Array.prototype.forEach.call(head.rows[0].cells, function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
        if (onSort) { onSort(col, desc); return; }
        sortBody(table.tBodies[0], col, desc);
      });
    });
  }
  function sortBody(body, col, desc) {
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = rows.length > 0 && rows.every(function (r) { return r.cells[col] && r.cells[col].hasAttribute("data-v"); });
    rows.sort(function (a, b) {
      var x, y;
      if (numeric) { x = parseFloat(a.cells[col].getAttribute("data-v")); y = parseFloat(b.cells[col].getAttribute("data-v")); }
      else { x = a.cells[col].textContent; y = b.cells[col].textContent; }
      var c = x < y ? -1 : x > y ? 1 : 0;
      return desc ? -c : c;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
    if (t.id !== "profile-table") makeSortable(t);
  });

  // ---- profile ---------------------------------------------------------

  var prof = data.profile;
  var profTable = document.getElementById("profile-table");
  var profSelect = document.getElementById("profile-location");
  var profSort = { col: 3, desc: true }; // exclusive time, largest first
  var profColumns = (function () {
    var cols = [
      { name: "region", text: true, get: function (r) { return regions[r[1]]; } },
      { name: "visits", get: function (r) { return r[2]; }, fmt: count },
      { name: "inclusive", get: function (r) { return r[3]; }, fmt: dur },
      { name: "exclusive", get: function (r) { return r[4]; }, fmt: dur },
      { name: "% incl.", get: function (r) { return r[3] / profTime(r[0]); }, fmt: function (v) { return pct(v, 1); } },
      { name: "% excl.", get: function (r) { return r[4] / profTime(r[0]); }, fmt: function (v) { return pct(v, 1); } }
    ];
    prof.metrics.forEach(function (m, g) {
      cols.push({ name: m + " incl.", get: function (r) { return r[5] ? r[5][g] : null; }, fmt: count });
      cols.push({ name: m + " excl.", get: function (r) { return r[6] ? r[6][g] : null; }, fmt: count });
    });
    if (prof.ipc) {
      cols.push({ name: "IPC", get: function (r) { return r.length > 7 ? r[7] : null; }, fmt: function (v) { return v.toFixed(2); } });
    }
    return cols;
  })();
  function profTime(loc) { return loc < 0 ? prof.total : prof.times[loc]; }

  function renderProfile() {
    var loc = parseInt(profSelect.value, 10);
    var rows = prof.rows.filter(function (r) { return r[0] === loc; });
    var c = profColumns[profSort.col];
    rows.sort(function (a, b) {
      var x = c.get(a), y = c.get(b);
      if (x === null) x = -Infinity;
      if (y === null) y = -Infinity;
      var d = x < y ? -1 : x > y ? 1 : 0;
      return profSort.desc ? -d : d;
    });
    var html = [];
    rows.forEach(function (r) {
      html.push("<tr>");
      profColumns.forEach(function (col, i) {
        var v = col.get(r);
        if (i === 0) {
          html.push('<td class="region"><span class="swatch" style="background:' + regionCSS(r[1], 1) + '"></span>' + escapeHTML(v) + "</td>");
        } else if (v === null || v === undefined || isNaN(v)) {
          html.push('<td data-v="-1">-</td>');
        } else {
          html.push('<td data-v="' + v + '">' + escapeHTML(col.fmt(v)) + "</td>");
        }
      });
      html.push("</tr>");
    });
    profTable.tBodies[0].innerHTML = html.join("");
  }
  (function () {
    // Groups of locations (a run of many ranks) are summed: "all" counts
    // the locations, not the groups.
    var opts = ['<option value="-1">all locations (' + (prof.all || prof.locations.length) + ")</option>"];
    prof.locations.forEach(function (name, i) { opts.push('<option value="' + i + '">' + escapeHTML(name) + "</option>"); });
    profSelect.innerHTML = opts.join("");
    var head = "<thead><tr>" + profColumns.map(function (c, i) {
      return "<th" + (i === profSort.col ? ' aria-sort="descending"' : "") + ">" + escapeHTML(c.name) + "</th>";
    }).join("") + "</tr></thead><tbody></tbody>";
    profTable.innerHTML = head;
    makeSortable(profTable, function (col, desc) {
      // Text sorts from A, numbers from the largest, on the first click.
      if (profColumns[col].text && profSort.col !== col) desc = false;
      profSort = { col: col, desc: desc };
      profTable.tHead.rows[0].cells[col].setAttribute("aria-sort", desc ? "descending" : "ascending");
      renderProfile();
    });
    profSelect.addEventListener("change", renderProfile);
    renderProfile();
  })();

  // ---- the profile as Cube shows it ----------------------------------------

  // Three panes: the metric tree, the call tree and the system tree
  // (calltree.go in package report). The values are exclusive per call
  // path and system unit; a folded call path shows its subtree's sum
  // (inclusive), an unfolded one its own, as in Cube. Choosing a metric
  // sets what the call tree shows; choosing a call path what the system
  // tree shows; choosing a unit there restricts the call tree to it.
  var cube = (function () {
    var tree = data.tree, units = prof.units || [];
    var n = tree.nodes.length / 2, parent = new Int32Array(n), region = new Int32Array(n), kids = [], roots = [];
    for (var i = 0; i < n; i++) {
      parent[i] = tree.nodes[2 * i];
      region[i] = tree.nodes[2 * i + 1];
      kids.push([]);
      if (parent[i] < 0) roots.push(i); else kids[parent[i]].push(i);
    }
    var state = { metric: 0, node: -1, units: null, open: {} };
    var metricsEl = document.getElementById("cube-metrics"), callsEl = document.getElementById("cube-calls"), sysEl = document.getElementById("cube-system");
    // values returns the exclusive and inclusive values of metric m per
    // call path over the units in the set us (null: all).
    function values(m, us) {
      var excl = new Float64Array(n), v = tree.values[m] || [];
      for (var k = 0; k + 2 < v.length; k += 3) if (!us || us[v[k + 1]]) excl[v[k]] += v[k + 2];
      var incl = Float64Array.from(excl);
      for (var j = n - 1; j >= 0; j--) if (parent[j] >= 0) incl[parent[j]] += incl[j];
      return { excl: excl, incl: incl };
    }
    function fmt(m, x) { return tree.metrics[m].count ? count(x) : dur(x); }
    function total(m, us) {
      var t = 0, v = tree.values[m] || [];
      for (var k = 0; k + 2 < v.length; k += 3) if (!us || us[v[k + 1]]) t += v[k + 2];
      return t;
    }
    function row(label, val, share, selected, toggle, swatch, title) {
      return '<div class="node' + (selected ? " selected" : "") + '"' + (title ? ' title="' + escapeHTML(title) + '"' : "") + '><span class="toggle">' + toggle + "</span>" +
        '<span class="val">' + escapeHTML(val) + '</span><span class="share">' + escapeHTML(share) + "</span>" +
        '<span class="bar" style="width:' + Math.round(Math.max(0, Math.min(1, share === "-" ? 0 : parseFloat(share) / 100)) * 60) + 'px"></span>' +
        (swatch >= 0 ? '<span class="swatch" style="background:' + regionCSS(swatch, 1) + '"></span>' : "") +
        '<span class="name">' + escapeHTML(label) + "</span></div>";
    }
    function renderMetrics() {
      var html = [];
      function add(m) {
        var sub = [];
        tree.metrics.forEach(function (mm, j) { if (mm.parent === m) sub.push(j); });
        var t = total(m, state.units);
        html.push('<li data-metric="' + m + '">' + row(tree.metrics[m].name, fmt(m, t), "", m === state.metric, "", -1, tree.metrics[m].about));
        if (sub.length) { html.push("<ul>"); sub.forEach(add); html.push("</ul>"); }
        html.push("</li>");
      }
      tree.metrics.forEach(function (mm, j) { if (mm.parent < 0) add(j); });
      metricsEl.innerHTML = html.join("");
    }
    function renderCalls() {
      var vals = values(state.metric, state.units), all = 0;
      roots.forEach(function (r) { all += vals.incl[r]; });
      var html = [];
      function add(i) {
        var open = !!state.open[i], k = kids[i].slice().sort(function (a, b) { return vals.incl[b] - vals.incl[a]; });
        var v = open ? vals.excl[i] : vals.incl[i];
        html.push('<li data-node="' + i + '">' + row(regions[region[i]], fmt(state.metric, v), pct(v, all), i === state.node, k.length ? (open ? "▾" : "▸") : "", region[i], ""));
        if (open && k.length) { html.push("<ul>"); k.forEach(add); html.push("</ul>"); }
        html.push("</li>");
      }
      roots.slice().sort(function (a, b) { return vals.incl[b] - vals.incl[a]; }).forEach(add);
      callsEl.innerHTML = html.length ? html.join("") : '<li class="muted">no calls</li>';
    }
    function renderSystem() {
      var m = state.metric, i = state.node, per = new Float64Array(units.length), v = tree.values[m] || [];
      if (i >= 0) {
        var inSub = new Uint8Array(n), open = !!state.open[i];
        for (var j = 0; j < n; j++) inSub[j] = j === i || (!open && parent[j] >= 0 && inSub[parent[j]]) ? 1 : 0;
        for (var k = 0; k + 2 < v.length; k += 3) if (inSub[v[k]]) per[v[k + 1]] += v[k + 2];
      }
      var all = 0;
      per.forEach(function (x) { all += x; });
      // host -> process -> location, each level only where it tells apart.
      var hosts = [], byHost = {};
      units.forEach(function (u, ui) {
        if (!(u.host in byHost)) { byHost[u.host] = { procs: [], byProc: {}, sum: 0, units: [] }; hosts.push(u.host); }
        var h = byHost[u.host];
        if (!(u.proc in h.byProc)) { h.byProc[u.proc] = { units: [], sum: 0 }; h.procs.push(u.proc); }
        h.byProc[u.proc].units.push(ui);
        h.byProc[u.proc].sum += per[ui];
        h.sum += per[ui];
        h.units.push(ui);
      });
      var html = ['<li data-units="">' + row("all " + (prof.all || units.length) + " locations", fmt(m, all), all > 0 ? "100.0%" : "-", !state.units, "", -1, "") + "</li>"];
      function sel(us) { return state.units && us.length === Object.keys(state.units).length && us.every(function (u) { return state.units[u]; }); }
      hosts.forEach(function (hn) {
        var h = byHost[hn], indent = hosts.length > 1;
        if (indent) html.push('<li data-units="' + h.units.join(" ") + '">' + row(hn || "host", fmt(m, h.sum), pct(h.sum, all), sel(h.units), "", -1, "") + "<ul>");
        h.procs.forEach(function (pn) {
          var pr = h.byProc[pn], named = pr.units.filter(function (u) { return units[u].name; });
          html.push('<li data-units="' + pr.units.join(" ") + '">' + row(pn, fmt(m, pr.sum), pct(pr.sum, all), sel(pr.units), "", -1, ""));
          if (named.length > 0 && pr.units.length > 1) {
            html.push("<ul>");
            pr.units.forEach(function (u) { html.push('<li data-units="' + u + '">' + row(units[u].name || "main", fmt(m, per[u]), pct(per[u], all), sel([u]), "", -1, "") + "</li>"); });
            html.push("</ul>");
          }
          html.push("</li>");
        });
        if (indent) html.push("</ul></li>");
      });
      sysEl.innerHTML = html.join("");
    }
    function render() { renderMetrics(); renderCalls(); renderSystem(); }
    metricsEl.addEventListener("click", function (ev) {
      var li = ev.target.closest("li[data-metric]");
      if (!li) return;
      state.metric = parseInt(li.getAttribute("data-metric"), 10);
      render();
    });
    callsEl.addEventListener("click", function (ev) {
      var li = ev.target.closest("li[data-node]");
      if (!li) return;
      var i = parseInt(li.getAttribute("data-node"), 10);
      if (ev.target.classList.contains("toggle") || state.node === i) state.open[i] = !state.open[i];
      state.node = i;
      render();
    });
    sysEl.addEventListener("click", function (ev) {
      var li = ev.target.closest("li[data-units]");
      if (!li) return;
      var us = li.getAttribute("data-units");
      if (!us) state.units = null;
      else {
        state.units = {};
        us.split(" ").forEach(function (u) { state.units[u] = true; });
      }
      render();
    });
    // At first: time, the heaviest path unfolded three calls deep, its
    // end selected, as a reader would open it.
    var start = values(0, null), at = -1, level = roots;
    for (var d = 0; d < 3 && level.length; d++) {
      at = level.reduce(function (a, b) { return start.incl[b] > start.incl[a] ? b : a; });
      if (kids[at].length && d < 2) state.open[at] = true;
      level = kids[at];
    }
    state.node = at;
    render();
    return { state: state, render: render, nodes: n };
  })();

  // ---- timeline: decoding ------------------------------------------------

  var tl = data.timeline;
  var widths = tl.columns.map(function (c) { return tl.span / c; });
  var decodeStart = performance.now();
  var rows = decodeTimeline();
  var decodeMs = performance.now() - decodeStart;

  // decodeTimeline reads the rows' calls and tiles (see lod.go in package
  // report for the encoding) into typed arrays, and per level the indices
  // of the calls drawn one by one there.
  function decodeTimeline() {
    var text = document.getElementById("timeline-data").textContent.replace(/\s+/g, "");
    var bin = atob(text), buf = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) buf[i] = bin.charCodeAt(i);
    var p = 0;
    function uv() {
      var x = 0, m = 1, b;
      do {
        if (p >= buf.length) throw new Error("timeline data ends early at byte " + p);
        b = buf[p++];
        x += (b & 127) * m;
        m *= 128;
      } while (b & 128);
      return x;
    }
    var out = tl.rows.map(function (meta, ri) {
      var n = uv();
      if (n !== meta.exact) throw new Error("timeline row " + ri + ": " + n + " exact calls, the metadata says " + meta.exact);
      var start = new Float64Array(n), len = new Float64Array(n), reg = new Int32Array(n), flags = new Uint8Array(n);
      var t = 0;
      for (var k = 0; k < n; k++) {
        t += uv();
        start[k] = t;
        len[k] = uv();
        var rf = uv();
        reg[k] = Math.floor(rf / 4);
        flags[k] = rf % 4;
      }
      var exactAt = widths.map(function (w) {
        var idx = [];
        for (var k = 0; k < n; k++) if (len[k] >= w) idx.push(k);
        return Int32Array.from(idx);
      });
      var tiles = tl.columns.map(function (_, l) {
        var m = uv();
        if (m !== meta.tiles[l]) throw new Error("timeline row " + ri + " level " + l + ": " + m + " tiles, the metadata says " + meta.tiles[l]);
        var col = new Int32Array(m), treg = new Int32Array(m), cov = new Uint8Array(m), calls = new Float64Array(m);
        // A group's row: each tile says how many members agree on its
        // region, and the least and most coverage of a member.
        var agree = meta.members ? new Int32Array(m) : null;
        var lo = meta.members ? new Uint8Array(m) : null, hi = meta.members ? new Uint8Array(m) : null;
        var c = -1;
        for (var k = 0; k < m; k++) {
          c += uv() + 1;
          col[k] = c;
          treg[k] = uv();
          if (p >= buf.length) throw new Error("timeline data ends early at byte " + p);
          cov[k] = buf[p++];
          calls[k] = uv();
          if (agree) {
            agree[k] = uv();
            if (p + 2 > buf.length) throw new Error("timeline data ends early at byte " + p);
            lo[k] = buf[p++];
            hi[k] = buf[p++];
          }
        }
        return { col: col, reg: treg, cov: cov, calls: calls, agree: agree, lo: lo, hi: hi };
      });
      return { meta: meta, start: start, len: len, reg: reg, flags: flags, exactAt: exactAt, tiles: tiles };
    });
    if (p !== buf.length) throw new Error("timeline data: " + (buf.length - p) + " bytes left over");
    return out;
  }

  // A location's tasks (tasks.go in package report): their spans as start,
  // length and number, decoded from the triples of the page's data.
  tl.locations.forEach(function (loc) {
    var t = loc.tasks;
    if (!t || !t.spans) return;
    var n = t.spans.length / 3, at = 0;
    t.start = new Float64Array(n); t.len = new Float64Array(n); t.num = new Float64Array(n);
    for (var k = 0; k < n; k++) {
      at += t.spans[3 * k];
      t.start[k] = at;
      t.len[k] = t.spans[3 * k + 1];
      t.num[k] = t.spans[3 * k + 2];
    }
  });
  // taskAt returns the index of loc's task running at t, else of one that
  // ends or begins within slack of it, -1 if none.
  function taskAt(loc, t, slack) {
    var ts = loc.tasks;
    if (!ts || !ts.start) return -1;
    var lo = 0, hi = ts.start.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (ts.start[mid] <= t) lo = mid + 1; else hi = mid;
    }
    var k = lo - 1;
    if (k >= 0 && t < ts.start[k] + ts.len[k]) return k;
    if (k >= 0 && t - slack < ts.start[k] + ts.len[k]) return k;
    if (k + 1 < ts.start.length && ts.start[k + 1] <= t + slack) return k + 1;
    return -1;
  }

  // ---- timeline: view ----------------------------------------------------

  var canvas = document.getElementById("tl-canvas");
  var ctx = canvas.getContext("2d");
  var tip = document.getElementById("tl-tip");
  var status = document.getElementById("tl-status");
  var gutter = 190, axisH = 24, maxPlotH = 640, groupW = 18;
  var rowH = Math.max(3, Math.min(18, Math.floor(maxPlotH / Math.max(rows.length, 1))));
  var view = { v0: 0, v1: tl.span, scroll: 0 };
  var firstRowOf = {};
  rows.forEach(function (r, i) { if (!(r.meta.loc in firstRowOf)) firstRowOf[r.meta.loc] = i; });
  var minSpan = 50; // ns visible at the most zoom: finer than any clock tick
  var lastDraw = { level: 0, exact: 0, tiles: 0, ms: 0 };

  function plotWidth() { return Math.max(canvas.clientWidth - gutter, 50); }
  function plotHeight() { return Math.min(rows.length * rowH, maxPlotH); }
  function levelFor(pxTime) {
    for (var l = 0; l < widths.length; l++) if (widths[l] <= pxTime) return l;
    return widths.length - 1;
  }

  function patternFor(kind) {
    var c = document.createElement("canvas");
    c.width = c.height = 8;
    var g = c.getContext("2d");
    var color = { closed: "#555", revoked: "#aaa", window: "#4f7fd0", stopped: "#d9822b" }[kind] || "#777";
    g.fillStyle = "rgba(255,255,255,0.85)";
    g.fillRect(0, 0, 8, 8);
    g.strokeStyle = color;
    g.lineWidth = kind === "revoked" ? 1 : 2;
    g.beginPath();
    if (kind === "window" || kind === "stopped") { g.moveTo(0, 8); g.lineTo(8, 0); g.moveTo(-4, 4); g.lineTo(4, -4); g.moveTo(4, 12); g.lineTo(12, 4); }
    else { g.moveTo(0, 0); g.lineTo(8, 8); g.moveTo(-4, 4); g.lineTo(4, 12); g.moveTo(4, -4); g.lineTo(12, 4); }
    g.stroke();
    return ctx.createPattern(c, "repeat");
  }
  var patterns = {};
  ["closed", "revoked", "window", "stopped"].forEach(function (k) { patterns[k] = patternFor(k); });
  // Marks, region parameters and channel messages (their ticks).
  var pointStyle = { mark: "#111", param: "#7d3c98", chan: "#1f6fb2" };

  // Tile colours: four steps of coverage, so that runs of equal tiles
  // merge into one rectangle.
  var tileAlpha = [0.3, 0.5, 0.72, 0.95];
  var tileStyle = regions.map(function (_, i) { return tileAlpha.map(function (a) { return regionCSS(i, a); }); });
  var callStyle = regions.map(function (_, i) { return regionCSS(i, 1); });

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    var w = canvas.clientWidth || 800, h = axisH + plotHeight();
    canvas.style.height = h + "px";
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  // firstEnding returns the first index in idx whose call ends after t:
  // the calls of a row do not overlap, so their ends are in order too.
  function firstEnding(r, idx, t) {
    var lo = 0, hi = idx.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1, k = idx[mid];
      if (r.start[k] + r.len[k] <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function firstColumn(tiles, c) {
    var lo = 0, hi = tiles.col.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (tiles.col[mid] < c) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Text that does not fit is cut short with an ellipsis, not squeezed.
  var widthCache = {};
  function textWidth(s) {
    var w = widthCache[s];
    if (w === undefined) w = widthCache[s] = ctx.measureText(s).width;
    return w;
  }
  // regionLabel returns region i's name, or its widest shortened form
  // that fits room, else its shortest, for fitText to cut at its end.
  function regionLabel(i, room) {
    var s = regions[i];
    if (textWidth(s) <= room) return s;
    for (var k = 0; k < shortNames.length; k++) {
      s = shortNames[k][i];
      if (textWidth(s) <= room) return s;
    }
    return s;
  }
  function fitText(s, x, y, room, color) {
    if (room < 12) return;
    var w = textWidth(s);
    if (w > room) {
      var n = Math.floor(s.length * room / w) - 1;
      if (n < 1) return;
      s = s.slice(0, n) + "…";
    }
    ctx.fillStyle = color;
    ctx.fillText(s, x, y);
  }

  function draw() {
    var t0 = performance.now();
    var W = canvas.clientWidth, pw = plotWidth(), ph = plotHeight();
    var span = view.v1 - view.v0, pxTime = span / pw;
    var level = levelFor(pxTime), w = widths[level];
    var nExact = 0, nTiles = 0;
    ctx.clearRect(0, 0, W, axisH + ph);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, W, axisH + ph);
    var X = function (t) { return gutter + (t - view.v0) / pxTime; };
    var first = Math.floor(view.scroll / rowH), last = Math.min(rows.length, Math.ceil((view.scroll + ph) / rowH));
    ctx.save();
    ctx.beginPath();
    ctx.rect(gutter, axisH, pw, ph);
    ctx.clip();
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    for (var i = first; i < last; i++) {
      var r = rows[i], y = axisH + i * rowH - view.scroll, h = Math.max(rowH - 1, 1);
      var loc = tl.locations[r.meta.loc];
      // Shed stretches, hatched, labelled where there is room.
      (r.meta.marks || []).forEach(function (m) {
        if (m.to <= view.v0 || m.from >= view.v1) return;
        var x0 = Math.max(X(m.from), gutter), x1 = Math.min(X(m.to), gutter + pw);
        ctx.fillStyle = patterns[m.kind] || patterns.closed;
        ctx.fillRect(x0, y, Math.max(x1 - x0, 1), h);
        if (rowH >= 11 && x1 - x0 > 60) {
          ctx.fillStyle = "rgba(255,255,255,0.9)";
          var tw = Math.min(textWidth(m.label) + 8, x1 - x0 - 4);
          ctx.fillRect(x0 + 2, y + 1, tw, h - 2);
          fitText(m.label, x0 + 6, y + h / 2, tw - 8, "#222");
        }
      });
      // Tiles of the calls too short to draw one by one at this level.
      var tiles = r.tiles[level];
      var c0 = Math.floor(view.v0 / w), c1 = Math.ceil(view.v1 / w);
      var k = firstColumn(tiles, c0);
      var runX = 0, runEnd = -1, runStyle = null;
      for (; k < tiles.col.length && tiles.col[k] <= c1; k++) {
        var xs = X(tiles.col[k] * w), xe = X((tiles.col[k] + 1) * w);
        var style = tileStyle[tiles.reg[k]][tiles.cov[k] >> 6];
        nTiles++;
        if (style === runStyle && xs - runEnd < 0.5) { runEnd = xe; continue; }
        if (runStyle) { ctx.fillStyle = runStyle; ctx.fillRect(runX, y, Math.max(runEnd - runX, 1), h); }
        runX = xs; runEnd = xe; runStyle = style;
      }
      if (runStyle) { ctx.fillStyle = runStyle; ctx.fillRect(runX, y, Math.max(runEnd - runX, 1), h); }
      // Calls drawn one by one.
      var idx = r.exactAt[level];
      for (var j = firstEnding(r, idx, view.v0); j < idx.length; j++) {
        var e = idx[j], s = r.start[e];
        if (s >= view.v1) break;
        var x0 = X(s), x1 = X(s + r.len[e]), cw = Math.max(x1 - x0, 1);
        nExact++;
        ctx.fillStyle = callStyle[r.reg[e]];
        ctx.fillRect(x0, y, cw, h);
        if (cw > 3 && h > 4) {
          ctx.strokeStyle = "rgba(0,0,0,0.25)";
          ctx.strokeRect(x0 + 0.5, y + 0.5, cw - 1, h - 1);
        }
        if (r.flags[e] & 1) { ctx.fillStyle = "#1d2230"; ctx.fillRect(x0, y, 3, h); }
        if (r.flags[e] & 2) {
          ctx.fillStyle = "#1d2230";
          for (var dy = 0; dy < h; dy += 4) ctx.fillRect(x0 + cw - 3, y + dy, 3, 2);
        }
        if (rowH >= 11 && cw > 24) {
          var lx = Math.max(x0, gutter) + 3;
          var room = Math.min(x1, gutter + pw) - lx - 3;
          fitText(regionLabel(r.reg[e], room), lx, y + h / 2, room, "#111");
        }
      }
      // Marks, region parameters and channel messages: ticks over the
      // calls, a mark the height of the row.
      (r.meta.points || []).forEach(function (p) {
        if (p.t < view.v0 || p.t > view.v1) return;
        var px = X(p.t);
        ctx.fillStyle = pointStyle[p.kind] || "#000";
        if (p.kind === "mark") ctx.fillRect(px - 1, y, 2, h);
        else if (p.kind === "param") ctx.fillRect(px - 1, y, 2, Math.max(h / 3, 2));
        else ctx.fillRect(px - 1, y + h - Math.max(h / 3, 2), 2, Math.max(h / 3, 2));
      });
      // Tasks: on the location's first row, a strip along its top whose
      // shade alternates from task to task, and a tick where each began
      // when they are a few pixels apart.
      if (loc.tasks && loc.tasks.start && firstRowOf[r.meta.loc] === i) {
        var ts = loc.tasks, stripH = Math.min(4, Math.max(h / 4, 2)), lastTick = -Infinity;
        var k0 = Math.max(taskAt(loc, view.v0, 0), 0);
        while (k0 > 0 && ts.start[k0] > view.v0) k0--;
        for (var q = k0; q < ts.start.length && ts.start[q] < view.v1; q++) {
          if (ts.start[q] + ts.len[q] <= view.v0) continue;
          var tx0 = X(ts.start[q]), tx1 = X(ts.start[q] + ts.len[q]);
          ctx.fillStyle = q % 2 ? "#8a8fa0" : "#262b38";
          ctx.fillRect(tx0, y, Math.max(tx1 - tx0, 1), stripH);
          if (tx0 - lastTick >= 4) {
            ctx.fillStyle = "rgba(20,20,30,0.8)";
            ctx.fillRect(tx0, y, 1, h);
            lastTick = tx0;
          }
        }
      }
      // The end of an interrupted location.
      if (loc.interrupted && loc.end > view.v0 && loc.end < view.v1) {
        ctx.fillStyle = "#1d2230";
        ctx.fillRect(X(loc.end) - 1, y, 2, h);
      }
    }
    drawCollectives(X, first, last);
    drawMessages(X, first, last);
    ctx.restore();
    // Row labels and location separators.
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, axisH, W, ph);
    ctx.clip();
    ctx.fillStyle = "#f5f6fa";
    ctx.fillRect(0, axisH, gutter - 4, ph);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    var lastLabel = -Infinity;
    // The threads of one process are drawn under its rank: the rank's
    // label once, upright in a column of its own left of theirs.
    var groupOf = function (k) { return k >= 0 && k < rows.length ? tl.locations[rows[k].meta.loc].group || "" : ""; };
    for (i = first; i < last; i++) {
      r = rows[i];
      y = axisH + i * rowH - view.scroll;
      var loc = tl.locations[r.meta.loc], indent = loc.group ? groupW : 0, name = loc.group ? loc.name : loc.label;
      var newLoc = i === 0 || rows[i - 1].meta.loc !== r.meta.loc;
      var newGroup = newLoc && (i === 0 || groupOf(i - 1) !== (loc.group || "") || !loc.group);
      if (newLoc) {
        // Thin rows get a hairline, so that separators do not outweigh
        // the calls of 64 ranks.
        var thick = newGroup && rowH >= 8;
        ctx.fillStyle = thick ? "#5b6275" : rowH >= 8 ? "#c3c7d2" : "rgba(255,255,255,0.8)";
        ctx.fillRect(newGroup ? 0 : indent, y - (thick ? 1 : 0.5), W, thick ? 2 : 1);
      }
      if (loc.group && (i === first || newGroup)) {
        // The group's rows from here (or the first visible row) down.
        var end = i;
        while (end + 1 < rows.length && groupOf(end + 1) === loc.group) end++;
        var top = Math.max(y, axisH), bottom = Math.min(axisH + (end + 1) * rowH - view.scroll, axisH + ph);
        ctx.fillStyle = "#e3e6ef";
        ctx.fillRect(0, top, groupW - 3, bottom - top);
        if (bottom - top >= textWidth(loc.group) + 8) {
          ctx.save();
          ctx.translate(groupW / 2 - 1, (top + bottom) / 2);
          ctx.rotate(-Math.PI / 2);
          ctx.textAlign = "center";
          ctx.fillStyle = "#1d2230";
          ctx.fillText(loc.group, 0, 0);
          ctx.restore();
        }
      }
      if (rowH >= 10) {
        if (newLoc) fitText(name, 4 + indent, y + rowH / 2, gutter - 40 - indent, "#1d2230");
        // Under the label, what the filters and the buffer took.
        var below = i - firstRowOf[r.meta.loc] - 1, short = loc.short || [];
        if (below >= 0 && below < short.length) fitText(short[below], 4 + indent, y + rowH / 2, gutter - 40 - indent, "#a0522d");
        ctx.fillStyle = "#5b6275";
        ctx.fillText(String(r.meta.depth), gutter - 24, y + rowH / 2);
      } else if (newLoc && y - lastLabel >= 12) {
        fitText(name, 4 + indent, y + 5, gutter - 12 - indent, "#1d2230");
        lastLabel = y;
      }
    }
    ctx.restore();
    drawAxis(W, pw, pxTime);
    lastDraw = { level: level, exact: nExact, tiles: nTiles, ms: performance.now() - t0 };
    status.textContent = dur(view.v0) + " – " + dur(view.v1) + " (" + dur(span) + " of " + dur(tl.span) + ", ×" +
      (tl.span / span).toFixed(1) + "): level " + (level + 1) + " of " + widths.length + ", tiles of " + dur(w) + "; " +
      count(nExact) + " calls and " + count(nTiles) + " tiles drawn";
  }

  // rowMid is the middle of row i on the canvas.
  function rowMid(i) { return axisH + i * rowH - view.scroll + rowH / 2; }

  // drawMessages draws a line from each send to its receive, with an
  // arrowhead at the receive where there is room: Vampir's first cue.
  // Lines whose both ends are above or below the rows shown are skipped.
  var messages = tl.messages || [];
  var drawnMessages = 0, drawnLate = 0, lateColor = "#e6007e";
  function drawMessages(X, first, last) {
    drawnMessages = 0;
    drawnLate = 0;
    ctx.strokeStyle = "rgba(16,42,110,0.8)";
    ctx.fillStyle = "rgba(16,42,110,0.9)";
    ctx.lineWidth = 1;
    var heads = [];
    // Two passes: the others, then the late senders' on top in their own
    // colour (the receive waited for them).
    [false, true].forEach(function (lateOnes) {
      ctx.strokeStyle = lateOnes ? lateColor : "rgba(16,42,110,0.8)";
      ctx.lineWidth = lateOnes ? 1.5 : 1;
      ctx.beginPath();
      for (var m = 0; m + 3 < messages.length; m += 4) {
        var r0 = messages[m], t0 = messages[m + 1], r1 = messages[m + 2], t1 = messages[m + 3], late = r1 < 0;
        if (late) r1 = -1 - r1;
        if (late !== lateOnes) continue;
        if (Math.max(t0, t1) < view.v0 || Math.min(t0, t1) > view.v1) continue;
        if (Math.max(r0, r1) < first || Math.min(r0, r1) >= last) continue;
        var x0 = X(t0), y0 = rowMid(r0), x1 = X(t1), y1 = rowMid(r1);
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1, y1);
        drawnMessages++;
        if (late) drawnLate++;
        var len = Math.hypot(x1 - x0, y1 - y0);
        if (len > 14) heads.push([x0, y0, x1, y1, len, late]);
      }
      ctx.stroke();
    });
    // Arrowheads, when few enough to tell apart.
    if (heads.length > 400) return;
    heads.forEach(function (a) {
      ctx.fillStyle = a[5] ? lateColor : "rgba(16,42,110,0.9)";
      var ux = (a[2] - a[0]) / a[4], uy = (a[3] - a[1]) / a[4];
      ctx.beginPath();
      ctx.moveTo(a[2], a[3]);
      ctx.lineTo(a[2] - 7 * ux - 3 * uy, a[3] - 7 * uy + 3 * ux);
      ctx.lineTo(a[2] - 7 * ux + 3 * uy, a[3] - 7 * uy - 3 * ux);
      ctx.closePath();
      ctx.fill();
    });
  }

  // messageAt names the message whose line passes within 3 px of the
  // canvas point (px, py), "" if none: who sent it to whom, when, and how
  // long its receive waited for it.
  function messageAt(px, py) {
    var pxTime = (view.v1 - view.v0) / plotWidth(), best = 9, found = -1;
    var X = function (t) { return gutter + (t - view.v0) / pxTime; };
    for (var m = 0; m + 3 < messages.length; m += 4) {
      var r1 = messages[m + 2];
      if (r1 < 0) r1 = -1 - r1;
      var x0 = X(messages[m + 1]), y0 = rowMid(messages[m]), x1 = X(messages[m + 3]), y1 = rowMid(r1);
      if (px < Math.min(x0, x1) - 3 || px > Math.max(x0, x1) + 3 || py < Math.min(y0, y1) - 3 || py > Math.max(y0, y1) + 3) continue;
      var dx = x1 - x0, dy = y1 - y0, l2 = dx * dx + dy * dy, u = l2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / l2 : 0;
      u = Math.max(0, Math.min(1, u));
      var ex = x0 + u * dx - px, ey = y0 + u * dy - py, d2 = ex * ex + ey * ey;
      if (d2 < best) { best = d2; found = m; }
    }
    if (found < 0) return "";
    var to = messages[found + 2], late = to < 0;
    if (late) to = -1 - to;
    var from = tl.locations[rows[messages[found]].meta.loc].label, dest = tl.locations[rows[to].meta.loc].label;
    var text = "message " + from + " → " + dest + "\nsent at " + dur(messages[found + 1]) + ", received at " + dur(messages[found + 3]) +
      " (" + dur(messages[found + 3] - messages[found + 1]) + " later)";
    if (late) text += "\nlate sender: the receive was waiting when it was sent";
    return text;
  }

  // drawCollectives draws each collective operation as Vampir's marker:
  // from each member's entry a line to the moment the last member entered,
  // where a bar joins them all; the stretch each member waited is what the
  // lines show.
  var collectives = tl.collectives || [];
  var drawnCollectives = 0;
  function drawCollectives(X, first, last) {
    drawnCollectives = 0;
    ctx.strokeStyle = "rgba(0,0,0,0.85)";
    ctx.fillStyle = "#000";
    for (var c = 0; c + 2 < collectives.length;) {
      var release = collectives[c + 1], n = collectives[c + 2], at = c + 3;
      c = at + 2 * n;
      var lo = Infinity, hi = -Infinity, tmin = Infinity;
      for (var j = 0; j < n; j++) {
        lo = Math.min(lo, collectives[at + 2 * j]);
        hi = Math.max(hi, collectives[at + 2 * j]);
        tmin = Math.min(tmin, collectives[at + 2 * j + 1]);
      }
      if (release < view.v0 && tmin < view.v0 || tmin > view.v1) continue;
      if (hi < first || lo >= last) continue;
      drawnCollectives++;
      var xr = X(release);
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(xr, rowMid(lo) - rowH / 3);
      ctx.lineTo(xr, rowMid(hi) + rowH / 3);
      ctx.stroke();
      // Rows too thin for a line each show the bar alone: the calls
      // under it tell who waited.
      if (rowH < 9) continue;
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (j = 0; j < n; j++) {
        var y = rowMid(collectives[at + 2 * j]), x = X(collectives[at + 2 * j + 1]);
        ctx.moveTo(x, y);
        ctx.lineTo(xr, y);
      }
      ctx.stroke();
      {
        for (j = 0; j < n; j++) {
          var yy = rowMid(collectives[at + 2 * j]), xx = X(collectives[at + 2 * j + 1]);
          ctx.fillRect(xx - 1, yy - 3, 3, 6);
        }
      }
    }
  }

  // axisLabels are the timeline axis's labels as last drawn, for the
  // self-check: text and left and right edge in px.
  var axisLabels = [];
  function drawAxis(W, pw, pxTime) {
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, W, axisH);
    ctx.fillStyle = "#1d2230";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // One unit for the whole axis, that of the latest time shown, and a
    // tick every 1, 2 or 5 × 10^k ns, at least 100 px apart and wide
    // enough for the longest label, so that labels never run together.
    var far = Math.max(Math.abs(view.v0), Math.abs(view.v1));
    var unit = far >= 1e9 ? [1e9, " s"] : far >= 1e6 ? [1e6, " ms"] : far >= 1e3 ? [1e3, " µs"] : [1, " ns"];
    var step = Math.pow(10, Math.floor(Math.log10(Math.max(pxTime * 100, 1e-3)))), k = 0;
    var nice = [1, 2, 5], base = step;
    var label = function (t, d) { return (t / unit[0]).toFixed(d) + unit[1]; };
    var decimalsOf = function (st) { return Math.max(0, -Math.floor(Math.log10(st / unit[0]) + 1e-9)); };
    for (;;) {
      step = base * nice[k % 3] * Math.pow(10, Math.floor(k / 3));
      var d = decimalsOf(step);
      var wide = Math.max(ctx.measureText(label(Math.floor(view.v0 / step) * step, d)).width,
        ctx.measureText(label(Math.ceil(view.v1 / step) * step, d)).width);
      if (step / pxTime >= Math.max(100, wide + 16) || k > 60) break;
      k++;
    }
    var decimals = decimalsOf(step);
    var first = Math.ceil(view.v0 / step);
    axisLabels = [];
    for (var n = first; n * step <= view.v1; n++) {
      var t = n * step, x = gutter + (t - view.v0) / pxTime, text = label(t, decimals), tw = ctx.measureText(text).width;
      ctx.fillRect(x, axisH - 6, 1, 6);
      if (x + 3 + tw > W) continue; // the last tick's label would be cut off
      ctx.fillText(text, x + 3, axisH / 2 - 2);
      axisLabels.push({ text: text, x0: x + 3, x1: x + 3 + tw });
    }
    ctx.fillRect(gutter, axisH - 1, pw, 1);
  }

  // hit tells what is drawn at row i, time t, at the current level.
  function hit(i, t) {
    var r = rows[i];
    if (!r) return null;
    var pw = plotWidth(), pxTime = (view.v1 - view.v0) / pw, level = levelFor(pxTime), w = widths[level];
    var loc = tl.locations[r.meta.loc];
    var out = { location: loc.label, depth: r.meta.depth, stats: r.meta.stats };
    var tk = taskAt(loc, t, pxTime);
    if (tk >= 0) {
      out.task = { number: loc.tasks.num[tk], start: loc.tasks.start[tk], duration: loc.tasks.len[tk], lane: !!loc.tasks.lane };
    }
    var points = r.meta.points || [];
    for (var q = 0; q < points.length; q++) {
      if (Math.abs(points[q].t - t) <= 3 * pxTime) {
        out.kind = "point";
        out.label = points[q].label;
        out.start = points[q].t;
        return out;
      }
    }
    var idx = r.exactAt[level];
    var j = firstEnding(r, idx, t - pxTime);
    if (j < idx.length) {
      var e = idx[j];
      // Calls narrower than a pixel are drawn a pixel wide.
      if (r.start[e] <= t + pxTime && t - pxTime < r.start[e] + Math.max(r.len[e], pxTime)) {
        out.kind = "call";
        out.region = regions[r.reg[e]];
        out.start = r.start[e];
        out.duration = r.len[e];
        out.truncated = !!(r.flags[e] & 1);
        out.open = !!(r.flags[e] & 2);
        return out;
      }
    }
    var tiles = r.tiles[level], c = Math.floor(t / w), k = firstColumn(tiles, c);
    if (k < tiles.col.length && tiles.col[k] === c) {
      out.kind = "tile";
      out.region = regions[tiles.reg[k]];
      out.start = c * w;
      out.duration = w;
      out.calls = tiles.calls[k];
      out.coverage = tiles.cov[k] / 255;
      if (tiles.agree) {
        out.members = r.meta.members;
        out.agree = tiles.agree[k];
        out.band = [tiles.lo[k] / 255, tiles.hi[k] / 255];
      }
      return out;
    }
    var marks = r.meta.marks || [];
    for (var m = 0; m < marks.length; m++) {
      if (marks[m].from <= t && t < marks[m].to) {
        out.kind = "shed";
        out.shed = marks[m].kind;
        out.label = marks[m].label;
        return out;
      }
    }
    out.kind = "none";
    return out;
  }

  function describe(h) {
    var lines = [h.location + ", depth " + h.depth];
    if (h.kind === "call") {
      lines.push(h.region + ": " + dur(h.duration) + " from " + dur(h.start));
      if (h.truncated) lines.push("entered before the keep-last window: its start is not in the trace");
      if (h.open) lines.push("never left: the run was interrupted");
    } else if (h.kind === "tile" && h.members) {
      lines.push(count(h.calls) + " call" + (h.calls === 1 ? "" : "s") + " in " + dur(h.start) + " – " + dur(h.start + h.duration));
      lines.push("mostly " + h.region + ": the busiest region of " + h.agree + " of the " + h.members + " locations (" + pct(h.agree, h.members) + ")");
      lines.push("calls cover " + Math.round(100 * h.band[0]) + "% to " + Math.round(100 * h.band[1]) + "% of a location's time here, " + Math.round(100 * h.coverage) + "% on average");
    } else if (h.kind === "tile") {
      lines.push(count(h.calls) + " short call" + (h.calls === 1 ? "" : "s") + " in " + dur(h.start) + " – " + dur(h.start + h.duration));
      lines.push("busiest: " + h.region + "; short calls cover " + Math.round(100 * h.coverage) + "% of the tile");
    } else if (h.kind === "shed") {
      lines.push(h.label);
    } else if (h.kind === "point") {
      lines.push(h.label + " at " + dur(h.start));
    }
    if (h.task) {
      lines.push("in task " + h.task.number + (h.task.lane ? " (a goroutine holding the lane)" : "") + ": " + dur(h.task.duration) + " from " + dur(h.task.start));
    }
    lines.push(h.stats);
    return lines.join("\n");
  }

  // ---- timeline: interaction ---------------------------------------------

  function clampView() {
    var span = Math.min(Math.max(view.v1 - view.v0, Math.min(minSpan, tl.span)), tl.span);
    var v0 = Math.min(Math.max(view.v0, 0), tl.span - span);
    view.v0 = v0;
    view.v1 = v0 + span;
    view.scroll = Math.min(Math.max(view.scroll, 0), Math.max(rows.length * rowH - plotHeight(), 0));
  }
  function zoomAt(t, factor) {
    view.v0 = t - (t - view.v0) / factor;
    view.v1 = t + (view.v1 - t) / factor;
    clampView();
    draw();
  }
  function eventTime(ev) {
    var rect = canvas.getBoundingClientRect();
    var x = ev.clientX - rect.left - gutter;
    return view.v0 + Math.max(0, x) * (view.v1 - view.v0) / plotWidth();
  }
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var d = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
    zoomAt(eventTime(ev), Math.exp(-d * 0.002));
  }, { passive: false });
  document.getElementById("tl-in").addEventListener("click", function () { zoomAt((view.v0 + view.v1) / 2, 2); });
  document.getElementById("tl-out").addEventListener("click", function () { zoomAt((view.v0 + view.v1) / 2, 0.5); });
  document.getElementById("tl-reset").addEventListener("click", function () { view.v0 = 0; view.v1 = tl.span; clampView(); draw(); });
  var drag = null;
  canvas.addEventListener("pointerdown", function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, v0: view.v0, v1: view.v1, scroll: view.scroll };
    // Capture keeps the drag when the pointer leaves the canvas; a pointer
    // the browser does not know (a synthetic event) cannot be captured.
    try { canvas.setPointerCapture(ev.pointerId); } catch (e) { /* drag without capture */ }
    canvas.classList.add("dragging");
    tip.hidden = true;
  });
  canvas.addEventListener("pointermove", function (ev) {
    if (drag) {
      var dt = (ev.clientX - drag.x) * (drag.v1 - drag.v0) / plotWidth();
      view.v0 = drag.v0 - dt;
      view.v1 = drag.v1 - dt;
      view.scroll = drag.scroll - (ev.clientY - drag.y);
      clampView();
      draw();
      return;
    }
    var rect = canvas.getBoundingClientRect();
    var x = ev.clientX - rect.left, y = ev.clientY - rect.top - axisH;
    var i = Math.floor((y + view.scroll) / rowH);
    if (x < gutter || y < 0 || y >= plotHeight() || i >= rows.length) {
      if (x < gutter && y >= 0 && i < rows.length) {
        var loc = tl.locations[rows[i].meta.loc];
        tip.textContent = loc.label + "\n" + (loc.notes || []).join("\n") + "\n" + rows[i].meta.stats;
        showTip(x, y);
      } else tip.hidden = true;
      return;
    }
    var msg = messageAt(x, y + axisH);
    if (msg) {
      tip.textContent = msg;
      showTip(x, y);
      return;
    }
    var h = hit(i, eventTime(ev));
    if (!h || (h.kind === "none" && !h.task)) { tip.hidden = true; return; }
    tip.textContent = describe(h);
    showTip(x, y);
  });
  function showTip(x, y) {
    tip.hidden = false;
    var wrapW = canvas.clientWidth;
    tip.style.left = Math.min(x + 14, Math.max(wrapW - tip.offsetWidth - 4, 0)) + "px";
    tip.style.top = (y + axisH + 14) + "px";
  }
  canvas.addEventListener("pointerup", function (ev) {
    drag = null;
    try { canvas.releasePointerCapture(ev.pointerId); } catch (e) { /* not captured */ }
    canvas.classList.remove("dragging");
  });
  canvas.addEventListener("pointerleave", function () { if (!drag) tip.hidden = true; });
  window.addEventListener("resize", resize);

  // Notes per location, below the timeline.
  (function () {
    var notes = document.getElementById("tl-notes");
    var html = ["<details><summary>Per location: what the filters and the buffer removed</summary><ul>"];
    tl.locations.forEach(function (l) {
      html.push("<li><b>" + escapeHTML(l.label) + "</b>: " + escapeHTML((l.notes || []).join("; ")) + "</li>");
    });
    html.push("</ul></details>");
    notes.innerHTML = html.join("");
  })();

  // ---- the URL fragment: #zoom=8&at=0.5&only=timeline&probe=ROW:NS,... ------

  // zoom shows 1/zoom of the run around at (a fraction of it, default the
  // middle) and scrolls the timeline into view; only shows one section
  // alone (for a screenshot: headless browsers capture the top of the
  // page); probe asks what is drawn at rows and times, for a test that
  // reads the self-check.
  function fragment() {
    var args = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) args[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return args;
  }
  function applyFragment() {
    var args = fragment();
    if (args.zoom) {
      var z = Math.max(parseFloat(args.zoom) || 1, 1), at = args.at ? parseFloat(args.at) : 0.5;
      var center = Math.min(Math.max(at, 0), 1) * tl.span, half = tl.span / z / 2;
      view.v0 = center - half;
      view.v1 = center + half;
      clampView();
    }
    var only = args.only && document.getElementById(args.only);
    Array.prototype.forEach.call(document.querySelectorAll("body > section"), function (s) {
      s.hidden = !!only && s !== only;
    });
    if (args.zoom && !only) document.getElementById("timeline").scrollIntoView();
    resize();
    return args;
  }
  window.addEventListener("hashchange", applyFragment);
  var args = applyFragment();

  // ---- self-check --------------------------------------------------------

  // interact drives the page as a user would, with synthetic events, and
  // says what each did; it restores the view afterwards.
  function interact() {
    var out = {}, saved = { v0: view.v0, v1: view.v1, scroll: view.scroll };
    var rect = canvas.getBoundingClientRect();
    var cx = rect.left + gutter + plotWidth() / 2, cy = rect.top + axisH + Math.min(rowH, plotHeight()) / 2;
    var span = function () { return view.v1 - view.v0; };
    var before = span();
    canvas.dispatchEvent(new WheelEvent("wheel", { deltaY: -300, clientX: cx, clientY: cy, bubbles: true, cancelable: true }));
    out.wheelZoom = before / span();
    var v0 = view.v0;
    var pointer = function (type, x, y) {
      canvas.dispatchEvent(new PointerEvent(type, { pointerId: 7, clientX: x, clientY: y, bubbles: true, button: 0, buttons: type === "pointerup" ? 0 : 1 }));
    };
    pointer("pointerdown", cx, cy);
    pointer("pointermove", cx - 100, cy);
    pointer("pointerup", cx - 100, cy);
    out.dragPixels = (view.v0 - v0) / (span() / plotWidth());
    before = span();
    document.getElementById("tl-in").click();
    out.buttonZoom = before / span();
    document.getElementById("tl-reset").click();
    out.reset = view.v0 === 0 && view.v1 === tl.span;
    // Hover the middle of the first row's first call.
    var r0 = rows[0];
    if (r0 && r0.start.length > 0) {
      var tmid = r0.start[0] + r0.len[0] / 2;
      pointer("pointermove", rect.left + gutter + (tmid - view.v0) / (span() / plotWidth()), cy);
      out.hover = tip.hidden ? "" : tip.textContent;
    }
    canvas.dispatchEvent(new PointerEvent("pointerleave", { pointerId: 7, bubbles: true }));
    // The profile: sort by visits, then show one location.
    var head = profTable.tHead.rows[0].cells, body = profTable.tBodies[0];
    head[1].click();
    var visits = Array.prototype.map.call(body.rows, function (r) { return parseFloat(r.cells[1].getAttribute("data-v")); });
    out.sortedByVisits = visits.every(function (v, i) { return i === 0 || visits[i - 1] >= v; });
    head[0].click();
    var names = Array.prototype.map.call(body.rows, function (r) { return r.cells[0].textContent; });
    out.sortedByName = names.every(function (v, i) { return i === 0 || names[i - 1] <= v; });
    if (prof.locations.length > 0) {
      profSelect.value = "0";
      profSelect.dispatchEvent(new Event("change"));
      out.locationRows = body.rows.length;
      profSelect.value = "-1";
      profSelect.dispatchEvent(new Event("change"));
    }
    // A static table sorts too.
    var other = document.querySelector("#facts table.sortable");
    if (other && other.tBodies[0].rows.length > 1) {
      // Its first numeric column, sorted largest first.
      var cells = other.tBodies[0].rows[0].cells, col = 0;
      while (col < cells.length && !cells[col].hasAttribute("data-v")) col++;
      other.tHead.rows[0].cells[col].click();
      var first = parseFloat(other.tBodies[0].rows[0].cells[col].getAttribute("data-v"));
      var last = parseFloat(other.tBodies[0].rows[other.tBodies[0].rows.length - 1].cells[col].getAttribute("data-v"));
      out.staticSorted = first >= last;
    }
    view.v0 = saved.v0; view.v1 = saved.v1; view.scroll = saved.scroll;
    draw();
    return out;
  }

  var check = { sections: {}, timeline: {}, probes: [] };
  ["facts", "profile", "timeline", "waitstates", "variation", "dynamics", "communication", "counters"].forEach(function (id) {
    var s = document.getElementById(id);
    check.sections[id] = !!s && s.querySelector("h2") !== null && s.textContent.length > 40;
  });
  check.profileRows = profTable.tBodies[0].rows.length;
  // How tall each section is drawn, for the tests that keep what comes
  // before the profile within a screen.
  check.heights = {};
  Array.prototype.forEach.call(document.querySelectorAll("body > section"), function (s) { check.heights[s.id] = s.offsetHeight; });
  check.cube = {
    nodes: cube.nodes, metrics: data.tree.metrics.length,
    calls: document.querySelectorAll("#cube-calls li").length, system: document.querySelectorAll("#cube-system li").length
  };
  check.timeline = {
    rows: rows.length, level: lastDraw.level, exact: lastDraw.exact, tiles: lastDraw.tiles,
    drawMs: Math.round(lastDraw.ms), decodeMs: Math.round(decodeMs), v0: view.v0, v1: view.v1,
    messages: messages.length / 4, messagesDrawn: drawnMessages, lateDrawn: drawnLate, collectivesDrawn: drawnCollectives,
    pxTime: (view.v1 - view.v0) / plotWidth(),
    canvas: [canvas.width, canvas.height]
  };
  // Hovering the middle of the first message's line names it.
  if (messages.length >= 4) {
    var mr1 = messages[2] < 0 ? -1 - messages[2] : messages[2], mpx = (view.v1 - view.v0) / plotWidth();
    var mx = gutter + ((messages[1] + messages[3]) / 2 - view.v0) / mpx, my = (rowMid(messages[0]) + rowMid(mr1)) / 2;
    check.timeline.messageTip = messageAt(mx, my);
  }
  if (args.probe) {
    args.probe.split(",").forEach(function (p) {
      var rc = p.split(":"), h = hit(parseInt(rc[0], 10), parseFloat(rc[1]));
      if (h) h.text = describe(h);
      check.probes.push(h);
    });
  }
  if (args.interact) check.interaction = interact();
  // The axis: labels apart and in one unit.
  check.timeline.axis = axisLabels.map(function (l) { return l.text; });
  axisLabels.forEach(function (l, i) {
    var prev = axisLabels[i - 1];
    if (prev && prev.x1 + 4 > l.x0) reportErrors.push("timeline axis labels run together: " + prev.text + " and " + l.text);
    if (prev && prev.text.split(" ")[1] !== l.text.split(" ")[1]) reportErrors.push("timeline axis in two units: " + prev.text + " and " + l.text);
  });
  if (axisLabels.length > 0 && axisLabels[axisLabels.length - 1].x1 > canvas.clientWidth) {
    reportErrors.push("timeline axis label clipped: " + axisLabels[axisLabels.length - 1].text);
  }
  var missing = Object.keys(check.sections).filter(function (k) { return !check.sections[k]; });
  if (missing.length) reportErrors.push("sections missing or empty: " + missing.join(", "));
  writeSelfCheck(check);
}
