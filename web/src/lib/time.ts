// Time formatting from the server's RFC 3339 timestamps: clock times, ages, durations,
// expiry countdowns. Every function takes `now` as an argument; nothing here invents a time.

/** Milliseconds since the epoch of a server timestamp, or null when it is not one. */
export function parseTime(text: string | null | undefined): number | null {
  if (typeof text !== 'string' || text.length === 0) return null;
  // RFC 3339 only: a date, `T`, a time, and a zone. `Date.parse` alone accepts far more.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/** The clock time of a timestamp (`14:03:07`), in `timeZone` (default: the browser's). */
export function formatClock(text: string | null | undefined, timeZone?: string): string {
  const ms = parseTime(text);
  if (ms === null) return '—';
  return new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
    timeZone,
  }).format(ms);
}

/** Date and time of a timestamp (`2026-11-30 14:03`), in `timeZone` (default: the browser's). */
export function formatDateTime(text: string | null | undefined, timeZone?: string): string {
  const ms = parseTime(text);
  if (ms === null) return '—';
  const parts = new Intl.DateTimeFormat('en-CA', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
    timeZone,
  }).formatToParts(ms);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
}

/** How long ago a timestamp was, short (`just now`, `42 s ago`, `5 min ago`, `3 h ago`, `2 d ago`). */
export function formatAge(text: string | null | undefined, now: number): string {
  const ms = parseTime(text);
  if (ms === null) return '—';
  const secs = Math.floor((now - ms) / 1000);
  // A server clock slightly ahead of ours is not "in the future" to an operator.
  if (secs < 5) return 'just now';
  if (secs < 60) return `${secs} s ago`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `${mins} min ago`;
  const hours = Math.floor(mins / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

/** A duration in milliseconds (`850 ms`, `1.2 s`, `2 min 5 s`, `1 h 3 min`). */
export function formatDuration(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const secs = Math.floor(ms / 1000);
  if (secs < 60) return `${secs} s`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return secs % 60 === 0 ? `${mins} min` : `${mins} min ${secs % 60} s`;
  const hours = Math.floor(mins / 60);
  return mins % 60 === 0 ? `${hours} h` : `${hours} h ${mins % 60} min`;
}

/** Time left until an expiry (`in 29 min`, `in 40 s`), or `expired` once it has passed. */
export function formatUntil(text: string | null | undefined, now: number): string {
  const ms = parseTime(text);
  if (ms === null) return '—';
  const secs = Math.floor((ms - now) / 1000);
  if (secs <= 0) return 'expired';
  if (secs < 60) return `in ${secs} s`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `in ${mins} min`;
  return `in ${Math.floor(mins / 60)} h ${mins % 60} min`;
}
