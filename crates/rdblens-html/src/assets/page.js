// rdblens HTML report: enhances the server-rendered tables (sorting,
// filtering) and draws the charts from the embedded JSON. Every untrusted
// string reaches the page through textContent, never as markup.
(function () {
  "use strict";
  var errors = [];
  var blocked = 0;
  function note(msg) { errors.push(String(msg)); }
  window.addEventListener("error", function (e) { note(e.message || "error"); });
  window.addEventListener("unhandledrejection", function (e) { note("rejection: " + e.reason); });
  document.addEventListener("securitypolicyviolation", function (e) { blocked += 1; note("blocked: " + e.blockedURI); });
  var consoleError = console.error;
  console.error = function () { note(Array.prototype.join.call(arguments, " ")); return consoleError.apply(console, arguments); };

  var SVG = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function h(tag, text, parent) {
    var e = document.createElement(tag);
    if (text !== undefined) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function bytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return i === 0 ? n + " B" : n.toFixed(1) + " " + units[i];
  }
  function count(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function utc(ms) { return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, ""); }
  var tip = null;
  function showTip(ev, text) {
    if (!tip) { tip = h("div", "", document.body); tip.className = "tip"; }
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 440) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  function hideTip() { if (tip) { tip.style.display = "none"; } }
  function tipOn(node, text) {
    node.addEventListener("mousemove", function (ev) { showTip(ev, text); });
    node.addEventListener("mouseleave", hideTip);
  }

  // Sorting: a click on a header sorts by that column (numbers by data-v).
  function sortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var desc = !th.classList.contains("desc");
        Array.prototype.forEach.call(heads, function (o) { o.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        var numeric = th.classList.contains("n");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], r;
          if (numeric) {
            r = parseFloat(x.getAttribute("data-v")) - parseFloat(y.getAttribute("data-v"));
          } else {
            r = x.textContent.localeCompare(y.textContent);
          }
          return desc ? -r : r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  // Filtering: rows whose text does not contain the box's text are hidden.
  function filter(input) {
    var table = document.getElementById(input.getAttribute("data-filter"));
    if (!table) { return; }
    input.addEventListener("input", function () {
      var q = input.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        r.style.display = !q || r.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
      });
    });
  }

  var PALETTE = ["#2f6fde", "#16a394", "#e3a008", "#d9534f", "#7c5cd6", "#1f9bd1", "#e07b39", "#4b9e4f", "#c2477f", "#5c6f8c"];

  // Squarified treemap layout of values (sorted, descending) into a rectangle.
  function squarify(items, x, y, w, h) {
    var out = [], rest = items.slice(), total = 0;
    rest.forEach(function (it) { total += it.v; });
    if (total <= 0) { return out; }
    var scale = (w * h) / total;
    function worst(row, side) {
      var s = 0, mx = 0, mn = Infinity;
      row.forEach(function (r) { var a = r.v * scale; s += a; mx = Math.max(mx, a); mn = Math.min(mn, a); });
      return Math.max(side * side * mx / (s * s), (s * s) / (side * side * mn));
    }
    while (rest.length) {
      var side = Math.min(w, h), row = [rest.shift()];
      while (rest.length && worst(row.concat([rest[0]]), side) <= worst(row, side)) { row.push(rest.shift()); }
      var sum = 0;
      row.forEach(function (r) { sum += r.v * scale; });
      var thick = sum / side, off = 0;
      row.forEach(function (r) {
        var len = r.v * scale / thick;
        if (w >= h) { out.push({ it: r, x: x, y: y + off, w: thick, h: len }); }
        else { out.push({ it: r, x: x + off, y: y, w: len, h: thick }); }
        off += len;
      });
      if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
    }
    return out;
  }

  function treemap(box, ns) {
    var path = [];
    var crumbs = h("div", undefined);
    crumbs.className = "crumbs";
    box.parentNode.insertBefore(crumbs, box);
    function nodes() {
      var level = ns.tree;
      path.forEach(function (p) { level = p[3]; });
      return level;
    }
    function draw() {
      crumbs.textContent = "";
      var top = h("button", "All namespaces", crumbs);
      top.addEventListener("click", function () { path = []; draw(); });
      path.forEach(function (p, i) {
        h("span", " › ", crumbs);
        var b = h("button", p[0], crumbs);
        b.addEventListener("click", function () { path = path.slice(0, i + 1); draw(); });
      });
      var W = 1200, H = 420;
      box.textContent = "";
      var svg = el("svg", { viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "xMidYMid meet" }, box);
      var items = nodes().filter(function (n) { return n[1] > 0; }).map(function (n, i) { return { n: n, v: n[1], i: i }; });
      if (!path.length && ns.no_namespace[0] > 0) { items.push({ n: ["(no namespace)", ns.no_namespace[0], ns.no_namespace[1], []], v: ns.no_namespace[0], i: items.length }); }
      items.sort(function (a, b) { return b.v - a.v; });
      squarify(items, 0, 0, W, H).forEach(function (t) {
        var n = t.it.n, g = el("g", {}, svg);
        var color = PALETTE[(path.length ? path[0].colour : t.it.i) % PALETTE.length];
        var r = el("rect", { x: t.x, y: t.y, width: Math.max(t.w, 0), height: Math.max(t.h, 0), fill: color, "class": "tile",
          "fill-opacity": path.length ? 0.55 + 0.45 * (t.it.v / items[0].v) : 0.9 }, g);
        r.setAttribute("data-name", n[0]);
        tipOn(g, n[0] + (n[3].length ? ns.separator : "") + " · " + bytes(n[1]) + " · " + count(n[2]) + " keys");
        if (t.w > 60 && t.h > 30) {
          var label = el("text", { x: t.x + 6, y: t.y + 17, fill: "#fff", "font-weight": "600", "font-size": 13 }, g);
          label.textContent = n[0].length > t.w / 8 ? n[0].slice(0, Math.max(1, Math.floor(t.w / 8) - 1)) + "…" : n[0];
          label.style.fill = "#fff";
          if (t.h > 48) {
            var sub = el("text", { x: t.x + 6, y: t.y + 33, "font-size": 11.5 }, g);
            sub.textContent = bytes(n[1]);
            sub.style.fill = "rgba(255,255,255,.9)";
          }
        }
        if (n[3] && n[3].length) {
          g.addEventListener("click", function () {
            hideTip();
            var entry = n.slice();
            entry.colour = path.length ? path[0].colour : t.it.i;
            path.push(entry);
            draw();
          });
        } else {
          r.style.cursor = "default";
        }
      });
    }
    draw();
  }

  function timeline(box, tools, ex) {
    // [start_ms, keys, memory, width_ms]: coarse over the whole span, as
    // fine as stored across the clusters.
    var data = ex.buckets;
    if (!data.length) { return; }
    var step = Infinity, coarsest = 0;
    data.forEach(function (b) { step = Math.min(step, b[3]); coarsest = Math.max(coarsest, b[3]); });
    var last = data[data.length - 1];
    var full = [data[0][0], last[0] + last[3]];
    var pad = Math.max((full[1] - full[0]) * 0.02, step);
    full = [full[0] - pad, full[1] + pad];
    var view = full.slice(), stack = [];
    var W = 1200, H = 300, L = 64, R = 12, T = 14, B = 42, BARS = 120;
    var info = h("span", "");
    var back = h("button", "Zoom out");
    var reset = h("button", "Whole range");
    tools.appendChild(back); tools.appendChild(reset); tools.appendChild(info);
    back.addEventListener("click", function () { if (stack.length) { view = stack.pop(); draw(); } });
    reset.addEventListener("click", function () { stack = []; view = full.slice(); draw(); });
    var LABEL_ROW = 14, LABEL_ROWS = 4, LABEL_GAP = 6;
    // One label per cluster in view, at its band's left edge, in the first
    // row where it overlaps no other label (clusters close in time share
    // an x); a label finding no free row among LABEL_ROWS is left out (the
    // band keeps its tooltip). Widths are measured once the text is in the
    // page (estimated when the chart is not rendered). Returns the rows used.
    function clusterLabels(parent, X) {
      var placed = [], rows = 0;
      ex.clusters.filter(function (c) { return c[1] > view[0] && c[0] < view[1]; })
        .sort(function (a, b) { return a[0] - b[0]; })
        .forEach(function (c) {
          var t = el("text", { "font-size": 11, "class": "cluster-label" }, parent);
          t.textContent = "cluster · " + count(c[2]) + " keys";
          t.style.fill = "#b5541a";
          var w = (t.getComputedTextLength && t.getComputedTextLength()) || t.textContent.length * 6.5;
          var x = Math.max(L, Math.min(Math.max(X(c[0]), L) + 3, W - R - w));
          for (var row = 0; row < LABEL_ROWS; row++) {
            var free = placed.every(function (p) {
              return p.row !== row || x + w + LABEL_GAP <= p.x || p.x + p.w + LABEL_GAP <= x;
            });
            if (free) { break; }
          }
          if (row === LABEL_ROWS) { parent.removeChild(t); return; }
          placed.push({ x: x, w: w, row: row });
          rows = Math.max(rows, row + 1);
          var y = T + 12 + row * LABEL_ROW;
          t.setAttribute("x", x);
          t.setAttribute("y", y);
          // A light backing keeps the label readable across band edges.
          parent.insertBefore(el("rect", { x: x - 2, y: y - 10, width: w + 4, height: 13, rx: 2, fill: "#fff" }), t);
        });
      return rows;
    }
    var NICE = [1e3, 5e3, 15e3, 6e4, 3e5, 9e5, 36e5, 3 * 36e5, 6 * 36e5, 864e5, 7 * 864e5, 30 * 864e5, 365 * 864e5];
    function draw() {
      box.textContent = "";
      var span = view[1] - view[0];
      var width = step;
      for (var k = 0; k < NICE.length; k++) { if (NICE[k] >= step && span / NICE[k] <= BARS) { width = NICE[k]; break; } }
      if (span / width > BARS) { width = Math.ceil(span / BARS / step) * step; }
      // A bucket coarser than the bars stays one bar of its own width.
      var bins = {};
      data.forEach(function (b) {
        if (b[0] + b[3] <= view[0] || b[0] >= view[1]) { return; }
        var s = b[3] > width ? b[0] : Math.floor(b[0] / width) * width;
        if (!bins[s]) { bins[s] = [0, 0, Math.max(b[3], width)]; }
        bins[s][0] += b[1]; bins[s][1] += b[2];
      });
      var max = 1;
      Object.keys(bins).forEach(function (s) { max = Math.max(max, bins[s][0]); });
      var svg = el("svg", { viewBox: "0 0 " + W + " " + H }, box);
      function X(t) { return L + (t - view[0]) / span * (W - L - R); }
      var bands = el("g", {}, svg), labels = el("g", {}, svg);
      var rows = clusterLabels(labels, X);
      // Room above the tallest bar for the rows of cluster labels.
      max *= Math.max(1.12, 1 / (1 - Math.min(0.6, (rows * LABEL_ROW + 6) / (H - T - B))));
      function Y(v) { return T + (1 - v / max) * (H - T - B); }
      ex.clusters.forEach(function (c) {
        if (c[1] <= view[0] || c[0] >= view[1]) { return; }
        var x0 = Math.max(X(c[0]), L), x1 = Math.min(X(c[1]), W - R);
        var band = el("rect", { x: x0, y: T, width: Math.max(x1 - x0, 3), height: H - T - B, fill: "rgba(229,115,40,.18)", stroke: "#e57328", "stroke-dasharray": "3 2" }, bands);
        tipOn(band, "Cluster: " + count(c[2]) + " keys, " + utc(c[0]) + " to " + utc(c[1]) + " UTC");
      });
      for (var g = 0; g <= 4; g++) {
        var v = max * g / 4, y = Y(v);
        el("line", { x1: L, x2: W - R, y1: y, y2: y, stroke: "#e3e7ee" }, svg);
        var lt = el("text", { x: L - 6, y: y + 4, "text-anchor": "end" }, svg);
        lt.textContent = count(Math.round(v));
      }
      Object.keys(bins).forEach(function (s) {
        s = Number(s);
        var x0 = Math.max(X(s), L), x1 = Math.min(X(s + bins[s][2]), W - R), y = Y(bins[s][0]);
        var r = el("rect", { x: x0 + 0.5, y: y, width: Math.max(x1 - x0 - 1, 1), height: H - B - y, fill: "#2f6fde" }, svg);
        tipOn(r, utc(s) + " UTC (+" + dur(bins[s][2]) + "): " + count(bins[s][0]) + " keys, " + bytes(bins[s][1]));
      });
      el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#9aa5b8" }, svg);
      for (var a = 0; a <= 5; a++) {
        var t2 = view[0] + span * a / 5, xa = X(t2);
        el("line", { x1: xa, x2: xa, y1: H - B, y2: H - B + 5, stroke: "#9aa5b8" }, svg);
        var at = el("text", { x: xa, y: H - B + 18, "text-anchor": a === 0 ? "start" : a === 5 ? "end" : "middle" }, svg);
        at.textContent = utc(t2).slice(span < 2 * 864e5 ? 5 : 0, span < 2 * 864e5 ? 19 : 16);
      }
      var sel = el("rect", { y: T, height: H - T - B, fill: "rgba(47,111,222,.15)", stroke: "#2f6fde", width: 0, x: 0 }, svg);
      var start = null;
      function toTime(ev) {
        var rect = svg.getBoundingClientRect();
        var x = (ev.clientX - rect.left) / rect.width * W;
        return view[0] + (Math.min(Math.max(x, L), W - R) - L) / (W - L - R) * span;
      }
      svg.addEventListener("mousedown", function (ev) { start = toTime(ev); ev.preventDefault(); });
      svg.addEventListener("mousemove", function (ev) {
        if (start === null) { return; }
        var now = toTime(ev);
        sel.setAttribute("x", X(Math.min(start, now)));
        sel.setAttribute("width", Math.abs(X(now) - X(start)));
      });
      svg.addEventListener("mouseup", function (ev) {
        if (start === null) { return; }
        var end = toTime(ev), a0 = Math.min(start, end), a1 = Math.max(start, end);
        start = null;
        if (a1 - a0 >= step && (a1 - a0) / span > 0.01) {
          stack.push(view.slice());
          view = [a0, Math.max(a1, a0 + 10 * step)];
          draw();
        } else {
          sel.setAttribute("width", 0);
        }
      });
      svg.addEventListener("dblclick", function () { if (stack.length) { view = stack.pop(); draw(); } });
      info.textContent = " " + utc(view[0]) + " to " + utc(view[1]) + " UTC · bars of " + dur(width) +
        " · finest: " + dur(step) + (coarsest > step ? " across the clusters, " + dur(coarsest) + " elsewhere" : "");
      back.disabled = !stack.length;
    }
    draw();
  }
  function dur(ms) {
    var s = ms / 1000;
    if (s < 60) { return Math.round(s) + "s"; }
    if (s < 3600) { return Math.round(s / 60) + "m"; }
    if (s < 86400) { return (s / 3600).toFixed(s % 3600 ? 1 : 0) + "h"; }
    return (s / 86400).toFixed(s % 86400 ? 1 : 0) + "d";
  }

  function start() {
    try {
      Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
      Array.prototype.forEach.call(document.querySelectorAll("input.filter"), filter);
      var node = document.getElementById("rdblens-data");
      var data = node ? JSON.parse(node.textContent) : {};
      var tm = document.getElementById("treemap");
      if (tm && data.namespaces) { treemap(tm, data.namespaces); }
      var tl = document.getElementById("timeline");
      if (tl && data.expiry) { timeline(tl, document.getElementById("timeline-tools"), data.expiry); }
      window.addEventListener("beforeprint", function () {
        Array.prototype.forEach.call(document.querySelectorAll("details.print-open"), function (d) { d.open = true; });
      });
    } catch (e) {
      note(e && e.stack ? e.stack : e);
    }
    // Read by the browser test (and anyone curious): errors, blocked and
    // made requests, and that the script ran to the end.
    setTimeout(function () {
      var b = document.body;
      var requests = performance.getEntriesByType ? performance.getEntriesByType("resource").length : 0;
      b.setAttribute("data-errors", String(errors.length));
      b.setAttribute("data-error-text", errors.join(" | "));
      b.setAttribute("data-blocked", String(blocked));
      b.setAttribute("data-requests", String(requests));
      b.setAttribute("data-ready", "1");
    }, 0);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
