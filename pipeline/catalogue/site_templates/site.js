// modelspec site: sort and filter the index table in the browser. The page works without this script:
// the table is then shown whole, in name order. The filter matches every word in a model's name and family.
(function () {
  "use strict";
  var table = document.getElementById("models");
  if (!table) { return; }
  var body = table.tBodies[0];
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);

  function sortBy(key, descending) {
    var column = -1, numeric = false;
    headers.forEach(function (th, i) {
      if (th.dataset.key === key) { column = i; numeric = th.dataset.type === "number"; }
      th.removeAttribute("aria-sort");
    });
    if (column < 0) { return; }
    headers[column].setAttribute("aria-sort", descending ? "descending" : "ascending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
      var order = numeric ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
      if (order === 0) { order = a.dataset.name < b.dataset.name ? -1 : 1; return order; }
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  headers.forEach(function (th) {
    th.tabIndex = 0;
    th.addEventListener("click", function () {
      var descending = th.getAttribute("aria-sort") !== "descending";
      sortBy(th.dataset.key, descending);
      var asked = new URLSearchParams(location.hash.slice(1));
      asked.set("sort", th.dataset.key + (descending ? "-desc" : "-asc"));
      history.replaceState(null, "", "#" + asked.toString());
    });
  });

  var box = document.getElementById("filter-box"), input = document.getElementById("filter");
  var shown = document.getElementById("shown");
  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), count = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var text = (row.cells[0].textContent + " " + row.cells[1].textContent).toLowerCase();
      var keep = words.every(function (word) { return text.indexOf(word) >= 0; });
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + " of " + body.rows.length + " shown";
  }
  box.hidden = false;
  input.addEventListener("input", filter);

  // The address may ask for a sort and a filter: #sort=total-desc&filter=qwen%20moe
  var asked = new URLSearchParams(location.hash.slice(1));
  var match = /^([a-z_]+)-(asc|desc)$/.exec(asked.get("sort") || "");
  if (match) { sortBy(match[1], match[2] === "desc"); }
  if (asked.get("filter")) { input.value = asked.get("filter"); }
  filter();
}());
