// The page's one script (allowed by its hash in the Content-Security-Policy).
// 1. Sortable key-PR table: a click on a column heading sorts its rows by that column
//    (numbers by value, text by locale order); a second click reverses the order.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll("th button").forEach(function (button, column) {
    button.addEventListener("click", function () {
      var th = button.parentElement;
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var numeric = th.dataset.type === "number";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort || a.cells[column].textContent.trim();
        var y = b.cells[column].dataset.sort || b.cells[column].textContent.trim();
        var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});

// 2. A link into a collapsed section (#pr-6046) opens it first.
function openTo(id) {
  var target = id && document.getElementById(id);
  if (!target) { return null; }
  for (var node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") { node.open = true; }
  }
  return target;
}
window.addEventListener("hashchange", function () { openTo(decodeURIComponent(location.hash.slice(1))); });
if (location.hash) { openTo(decodeURIComponent(location.hash.slice(1))); }

// 3. The "jump to PR" box: a number (with or without #) goes to that PR's entry, or says it is not here.
var jump = document.getElementById("jump-pr");
if (jump) {
  var note = document.getElementById("jump-note");
  var go = function () {
    var number = jump.value.replace(/[^0-9]/g, "");
    if (!number) { note.textContent = ""; return; }
    var target = openTo("pr-" + number);
    if (target) {
      note.textContent = "";
      location.hash = "pr-" + number;
      target.scrollIntoView();
    } else {
      note.textContent = jump.dataset.missing.replace("{n}", number);
    }
  };
  jump.addEventListener("change", go);
  jump.addEventListener("keydown", function (event) { if (event.key === "Enter") { go(); } });
}

// 4. Printing opens every collapsed section, and closes again the ones that were closed.
var closedForPrint = [];
window.addEventListener("beforeprint", function () {
  closedForPrint = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
  closedForPrint.forEach(function (d) { d.open = true; });
});
window.addEventListener("afterprint", function () {
  closedForPrint.forEach(function (d) { d.open = false; });
  closedForPrint = [];
});
