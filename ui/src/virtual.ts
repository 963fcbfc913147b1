// A virtualised list: only the rows in view (plus a margin) exist in the
// DOM, so a feed of 10,000 entries scrolls as smoothly as one of 10. Rows
// are as tall as their content: each is measured once drawn (and again
// when its key changes, e.g. an edit), unmeasured rows count as the
// estimate, and positions are the running sum of heights. A row above the
// view that turns out taller or shorter moves the scroll position by as
// much, so what the person is reading stays put.

/** Positions of rows of known or estimated heights (pure, for tests). */
export class Heights {
  private tops: number[] = [0];

  constructor(private sizes: number[] = []) {
    this.sum();
  }

  reset(sizes: number[]): void {
    this.sizes = sizes;
    this.sum();
  }

  /** Sets row `i`'s height; returns how much it changed. */
  set(i: number, h: number): number {
    const d = h - this.sizes[i];
    if (d !== 0) {
      this.sizes[i] = h;
      for (let j = i + 1; j < this.tops.length; j++) this.tops[j] += d;
    }
    return d;
  }

  top(i: number): number {
    return this.tops[Math.min(i, this.sizes.length)];
  }

  get total(): number {
    return this.tops[this.sizes.length];
  }

  /** The row at pixel `y` (the last row past the end). */
  at(y: number): number {
    let lo = 0;
    let hi = Math.max(0, this.sizes.length - 1);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.tops[mid] <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private sum(): void {
    this.tops = new Array(this.sizes.length + 1);
    this.tops[0] = 0;
    for (let i = 0; i < this.sizes.length; i++) this.tops[i + 1] = this.tops[i] + this.sizes[i];
  }
}

/** A change of width past this re-measures the rows (a scrollbar is ~15 px). */
const REWRAP_PX = 40;

export class VirtualList<T> {
  private spacer: HTMLElement;
  private rows: HTMLElement;
  private items: T[] = [];
  private frame = 0;
  /** Measured heights by row key. */
  private measured = new Map<string, number>();
  private heights = new Heights();

  constructor(
    private viewport: HTMLElement,
    private estimate: number,
    private render: (item: T, index: number) => HTMLElement,
    private keyOf: (item: T) => string,
    private overscanPx = 600,
  ) {
    this.spacer = document.createElement("div");
    this.spacer.className = "vlist-spacer";
    this.spacer.setAttribute("aria-hidden", "true");
    this.rows = document.createElement("div");
    this.rows.className = "vlist-rows";
    this.rows.setAttribute("role", "none");
    viewport.replaceChildren(this.spacer, this.rows);
    viewport.addEventListener("scroll", () => this.schedule(), { passive: true });
    // A wider or narrower pane wraps text differently: measure again. Not
    // for a scrollbar coming or going (a few pixels), or the two would
    // chase each other: new heights, a scrollbar, a new width, new heights…
    let width = viewport.clientWidth;
    new ResizeObserver(() => {
      if (Math.abs(viewport.clientWidth - width) > REWRAP_PX) {
        width = viewport.clientWidth;
        this.measured.clear();
        this.heights.reset(this.items.map(() => this.estimate));
      }
      this.schedule();
    }).observe(viewport);
  }

  setItems(items: T[]): void {
    this.items = items;
    if (this.measured.size > 50_000) this.measured.clear();
    this.heights.reset(items.map((it) => this.measured.get(this.keyOf(it)) ?? this.estimate));
    this.draw();
  }

  /** Redraws the visible rows (after an item changed in place). */
  refresh(): void {
    this.draw();
  }

  scrollToIndex(i: number): void {
    const top = this.heights.top(i);
    const bottom = this.heights.top(i + 1);
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
    const v = this.viewport;
    // Counted where tests can read it: an idle list draws nothing.
    v.dataset.draws = String(Number(v.dataset.draws ?? 0) + 1);
    const h = v.clientHeight || 800;
    const first = this.heights.at(Math.max(0, v.scrollTop - this.overscanPx));
    const out: HTMLElement[] = [];
    const drawn: number[] = [];
    for (let i = first; i < this.items.length && this.heights.top(i) < v.scrollTop + h + this.overscanPx; i++) {
      const row = this.render(this.items[i], i);
      row.style.position = "absolute";
      row.style.top = `${this.heights.top(i)}px`;
      row.style.left = "0";
      row.style.right = "0";
      out.push(row);
      drawn.push(i);
    }
    // Rows are drawn anew: focus on one (a person moving through the list
    // by keyboard) goes to the new tab stop, not to the page.
    const hadFocus = this.rows.contains(document.activeElement);
    this.rows.replaceChildren(...out);
    if (hadFocus) this.rows.querySelector<HTMLElement>('[tabindex="0"]')?.focus({ preventScroll: true });
    // Measure what was drawn; place the rows by their real heights.
    let shift = 0;
    const anchor = v.scrollTop;
    drawn.forEach((i, n) => {
      const real = out[n].offsetHeight;
      if (!real) return;
      this.measured.set(this.keyOf(this.items[i]), real);
      const d = this.heights.set(i, real);
      if (d !== 0 && this.heights.top(i + 1) - d <= anchor) shift += d;
    });
    drawn.forEach((i, n) => {
      out[n].style.top = `${this.heights.top(i)}px`;
    });
    this.spacer.style.height = `${this.heights.total}px`;
    if (shift !== 0) v.scrollTop = anchor + shift;
  }
}
