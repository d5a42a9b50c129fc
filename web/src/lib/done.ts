// The board's Done column: only what finished in the last week, a page at a time, so the
// column stays short however many tasks were ever done.

import { parseTime } from './time';
import type { SessionDto } from './types';

/** How far back the Done column reaches. */
export const DONE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** How many done tasks one "More" adds. */
export const DONE_PAGE = 20;

/** The Done column's sessions: last activity within the window, newest first, at most `shown`. */
export function recentDone(done: readonly SessionDto[], now: number, shown: number): { sessions: SessionDto[]; more: number } {
  const recent = done
    .filter((s) => now - (parseTime(s.last_activity_at) ?? 0) <= DONE_WINDOW_MS)
    .sort((a, b) => (parseTime(b.last_activity_at) ?? 0) - (parseTime(a.last_activity_at) ?? 0));
  return { sessions: recent.slice(0, shown), more: Math.max(0, recent.length - shown) };
}
