// Our own script: filters the page index embedded in index.html; page content is never executed.
// Titles that equal the query come first, then titles starting with it, then aliases, then the rest.
(function () {
  var pages = JSON.parse(document.getElementById("search-index").textContent);
  var input = document.getElementById("search");
  var list = document.getElementById("search-results");

  function rank(p, query, words) {
    var title = p.t.toLowerCase();
    var aliases = p.a.map(function (a) { return a.toLowerCase(); });
    if (title === query) return 0;
    if (aliases.indexOf(query) >= 0) return 1;
    if (title.indexOf(query) === 0) return 2;
    if (aliases.some(function (a) { return a.indexOf(query) === 0; })) return 3;
    var titleWords = title.split(/[^\p{L}\p{N}]+/u);
    if (words.every(function (w) { return titleWords.some(function (t) { return t.indexOf(w) === 0; }); })) return 4;
    if (words.every(function (w) { return title.indexOf(w) >= 0; })) return 5;
    return 6; // found in aliases or the summary only
  }

  input.addEventListener("input", function () {
    var query = input.value.trim().toLowerCase().replace(/\s+/g, " ");
    var words = query.split(" ").filter(Boolean);
    list.textContent = "";
    if (!words.length) return;
    pages.map(function (p) {
      var hay = [p.t, p.s].concat(p.a).join(" ").toLowerCase();
      var found = words.every(function (w) { return hay.indexOf(w) >= 0; });
      return found ? { page: p, rank: rank(p, query, words) } : null;
    }).filter(Boolean).sort(function (a, b) {
      return a.rank - b.rank || a.page.t.length - b.page.t.length || a.page.t.localeCompare(b.page.t);
    }).slice(0, 50).forEach(function (hit) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = hit.page.u;
      link.textContent = hit.page.t;
      item.appendChild(link);
      list.appendChild(item);
    });
  });
})();
