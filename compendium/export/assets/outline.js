// Our own script: a link to a node of the index's tree (index.html#n-2-1) opens its branch.
(function () {
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    for (var el = target.querySelector("details") || target.closest("details"); el; el = el.parentElement && el.parentElement.closest("details")) {
      el.open = true;
    }
    target.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
