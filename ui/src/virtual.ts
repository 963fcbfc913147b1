// A virtualised list: only the rows in view (plus a margin) exist in the
// DOM, so a feed of 10,000 entries scrolls as smoothly as one of 10.
// Rows have a fixed height; the selected entry opens in the detail pane.

export class VirtualList<T> {
  private spacer: HTMLElement;
  private rows: HTMLElement;
  private items: T[] = [];
  private frame = 0;

  constructor(
    private viewport: HTMLElement,
    private rowHeight: number,
    private render: (item: T, index: number) => HTMLElement,
    private overscan = 8,
  ) {
    this.spacer = document.createElement("div");
    this.spacer.className = "vlist-spacer";
    this.rows = document.createElement("div");
    this.rows.className = "vlist-rows";
    viewport.replaceChildren(this.spacer, this.rows);
    viewport.addEventListener("scroll", () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(viewport);
  }

  setItems(items: T[]): void {
    this.items = items;
    this.spacer.style.height = `${items.length * this.rowHeight}px`;
    this.draw();
  }

  /** Redraws the visible rows (after an item changed in place). */
  refresh(): void {
    this.draw();
  }

  scrollToIndex(i: number): void {
    const top = i * this.rowHeight;
    const bottom = top + this.rowHeight;
    const v = this.viewport;
    if (top < v.scrollTop) v.scrollTop = top;
    else if (bottom > v.scrollTop + v.clientHeight) v.scrollTop = bottom - v.clientHeight;
    this.draw();
  }

  /** How many rows are in the DOM now (for tests and the benchmark). */
  get rendered(): number {
    return this.rows.childElementCount;
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const h = this.viewport.clientHeight || 800;
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / this.rowHeight) - this.overscan);
    const last = Math.min(this.items.length, Math.ceil((this.viewport.scrollTop + h) / this.rowHeight) + this.overscan);
    const out: HTMLElement[] = [];
    for (let i = first; i < last; i++) {
      const row = this.render(this.items[i], i);
      row.style.position = "absolute";
      row.style.top = `${i * this.rowHeight}px`;
      row.style.height = `${this.rowHeight}px`;
      row.style.left = "0";
      row.style.right = "0";
      out.push(row);
    }
    this.rows.replaceChildren(...out);
  }
}
