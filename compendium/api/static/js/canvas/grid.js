// A uniform grid over node positions: finds the nodes under the pointer without scanning them all.

export class SpatialGrid {
  constructor() {
    this.cells = new Map();
    this.size = 1;
  }

  /** Rebuild from scratch; cheap (one pass), done lazily after nodes move. */
  build(nodes) {
    this.cells.clear();
    if (!nodes.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of nodes) {
      x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y);
      x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.y);
    }
    // About four nodes per cell on average (node sizes are on screen, not in the world).
    const area = Math.max(1, (x1 - x0) * (y1 - y0));
    this.size = Math.max(1e-6, Math.sqrt((area * 4) / nodes.length));
    for (const n of nodes) {
      const key = this.key(Math.floor(n.x / this.size), Math.floor(n.y / this.size));
      let cell = this.cells.get(key);
      if (!cell) this.cells.set(key, (cell = []));
      cell.push(n);
    }
  }

  key(cx, cy) {
    return cx * 73856093 + cy * 19349663; // numbers hash faster than strings
  }

  /** Nodes whose centre may lie within `reach` (world units) of (x, y). */
  *near(x, y, reach) {
    const cx0 = Math.floor((x - reach) / this.size), cx1 = Math.floor((x + reach) / this.size);
    const cy0 = Math.floor((y - reach) / this.size), cy1 = Math.floor((y + reach) / this.size);
    for (let cx = cx0; cx <= cx1; cx++) {
      for (let cy = cy0; cy <= cy1; cy++) {
        const cell = this.cells.get(this.key(cx, cy));
        if (cell) yield* cell;
      }
    }
  }
}
