// The HTML report's only script, inlined into the page: click a column
// heading to sort a table (numbers numerically, "-" last); when done,
// mark the page as rendered so a headless browser can tell it ran cleanly,
// with the smallest tick label's size on screen and whether the runs
// table overflows (checked by tests/report_cli.rs).
(function () {
  "use strict";
  function key(text) {
    var t = text.replace(/[!\s]/g, "");
    var n = parseFloat(t);
    return isNaN(n) ? null : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.classList.add("sortable");
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent, y = b.cells[col].textContent;
          var kx = key(x), ky = key(y);
          if (kx === null && ky === null) return asc ? x.localeCompare(y) : y.localeCompare(x);
          if (kx === null) return 1;
          if (ky === null) return -1;
          return asc ? kx - ky : ky - kx;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // The smallest tick label as drawn on screen (a chart's font size times
  // its scale), over the charts laid out, so a test can tell labels are
  // readable; and whether the runs table fits without scrolling.
  var smallest = Infinity;
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var ctm = svg.getScreenCTM();
    if (box.width === 0 || !ctm) return;
    svg.querySelectorAll("text.tick").forEach(function (t) {
      var px = parseFloat(getComputedStyle(t).fontSize) * ctm.a;
      if (px < smallest) smallest = px;
    });
  });
  var runs = document.querySelector("#runs .scroll");
  var charts = document.querySelectorAll("svg.chart").length;
  if (smallest !== Infinity) document.documentElement.setAttribute("data-min-tick-px", smallest.toFixed(1));
  if (runs) document.documentElement.setAttribute("data-runs-overflow", String(runs.scrollWidth > runs.clientWidth + 1));
  var root = document.documentElement;
  root.setAttribute("data-charts", String(charts));
  root.setAttribute("data-rendered", "ok");
})();
