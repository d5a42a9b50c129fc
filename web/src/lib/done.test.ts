// Unit tests of the board's Done column window and paging.
import { describe, expect, it } from 'vitest';
import { DONE_WINDOW_MS, recentDone } from './done';
import type { SessionDto } from './types';

const now = Date.parse('2026-12-01T12:00:00Z');
function done(id: string, ageMs: number): SessionDto {
  const at = new Date(now - ageMs).toISOString();
  return { id, status: 'done', goal: id, summary: null, board_outcome: null, plan_generation: 0, assent_generation: null, assent_expires_at: null, created_at: at, last_activity_at: at };
}

describe('recentDone', () => {
  it('keeps the last seven days, newest first, a page at a time', () => {
    const all = [done('old', DONE_WINDOW_MS + 1), done('b', 2000), done('a', 1000), done('edge', DONE_WINDOW_MS), done('c', 3000)];
    expect(recentDone(all, now, 2)).toEqual({ sessions: [all[2], all[1]], more: 2 });
    expect(recentDone(all, now, 20).sessions.map((s) => s.id)).toEqual(['a', 'b', 'c', 'edge']);
    expect(recentDone(all, now, 20).more).toBe(0);
  });
});
