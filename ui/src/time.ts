// Times as the person reads them: "3m ago", "in 2h". A time to come is
// rounded up (a pad with 1 h 59 m left expires "in 2h", never "in 1h"), a
// time past is rounded down ("59m ago", not "1h ago").

const UNITS: [number, string][] = [
  [86400, "d"],
  [3600, "h"],
  [60, "m"],
  [1, "s"],
];

/** A duration in its largest whole unit: `up` rounds up, else down. */
export function human(seconds: number, up = false): string {
  const s = Math.max(0, seconds);
  for (const [size, unit] of UNITS) {
    if (s >= size || size === 1) {
      const n = up ? Math.ceil(s / size) : Math.floor(s / size);
      // Rounding up may reach the next unit: 23h59m is "1d", not "24h".
      const bigger = UNITS.find(([b]) => b > size && n * size >= b && (n * size) % b === 0);
      return bigger ? `${(n * size) / bigger[0]}${bigger[1]}` : `${n}${unit}`;
    }
  }
  return "0s";
}

/** "just now", "5m ago", or "in 2h" for `t` seen at `now` (ms). */
export function ago(t: string, now = Date.now()): string {
  const s = Math.round((now - Date.parse(t)) / 1000);
  if (s < -59) return `in ${human(-s, true)}`;
  if (s < 60) return "just now";
  return `${human(s)} ago`;
}

/** How long until `t`, rounded up: "2h" for 1 h 59 m. */
export function until(t: string, now = Date.now()): string {
  return human((Date.parse(t) - now) / 1000, true);
}
