// Our own script: the site's graph view, drawn by the same renderer as the web UI's canvas.
(function () {
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var canvas = document.getElementById("graph-canvas");
  var tip = document.getElementById("graph-tip");
  var status = document.getElementById("graph-status");
  var strength = document.getElementById("min-strength");
  var spread = 40 * Math.sqrt(Math.max(1, data.nodes.length)) / 2; // world units, as in the UI
  var graph = new window.CompendiumGraph.GraphCanvas(canvas, {
    onHover: function (node, x, y) {
      if (!node) { tip.hidden = true; return; }
      tip.textContent = node.label + " · " + node.type + (node.topic ? " · " + node.topic : "")
        + (node.group && node.group !== node.topic ? " · " + node.group : "");
      tip.style.left = Math.min(x + 14, canvas.clientWidth - 240) + "px";
      tip.style.top = (y + 14) + "px";
      tip.hidden = false;
    },
    onNodeClick: function (node) { if (node.href) location.href = node.href; },
  });
  window.__graph = graph;
  graph.addNodes(data.nodes.map(function (n) {
    return Object.assign({}, n, { x: n.x * spread, y: n.y * spread });
  }));
  graph.addEdges(data.edges);
  graph.fit();
  function describe() {
    var shown = graph.visibleNodes().length;
    status.textContent = shown === data.nodes.length ? "" : shown + " of " + data.nodes.length + " entities shown";
  }
  strength.addEventListener("input", function () {
    graph.setFilter({ minStrength: Number(strength.value) || 0 });
    describe();
  });
  // Colouring by the outline: each root topic a colour (the layout groups its subtopics too).
  var colourBy = document.getElementById("colour-by");
  var legend = document.getElementById("group-legend");
  function drawLegend() {
    var counts = {};
    data.nodes.forEach(function (n) { if (n.group) counts[n.group] = (counts[n.group] || 0) + 1; });
    legend.textContent = "";
    graph.groups.forEach(function (g) {
      var item = document.createElement("span");
      item.className = "group-item";
      var swatch = document.createElement("span");
      swatch.className = "legend-swatch";
      swatch.setAttribute("aria-hidden", "true");
      swatch.style.background = window.CompendiumGraph.typeColour(graph.groups, g);
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(g + " (" + (counts[g] || 0) + ")"));
      legend.appendChild(item);
    });
    legend.hidden = graph.colourBy !== "group" || graph.groups.length === 0;
  }
  if (data.nodes.some(function (n) { return n.group; })) {
    colourBy.addEventListener("change", function () { graph.setColourBy(colourBy.value); drawLegend(); });
  } else {  // no outline: nothing to colour by but the type
    colourBy.previousElementSibling.remove();
    colourBy.remove();
  }
  document.getElementById("graph-fit").addEventListener("click", function () { graph.fit(); });
  window.addEventListener("compendium-theme", function () { graph.invalidate(); });
  canvas.dataset.ready = "true";
})();
