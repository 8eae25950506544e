// Sortable key-PR table: a click on a column heading sorts its rows by that column
// (numbers by value, text by locale order); a second click reverses the order.
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
