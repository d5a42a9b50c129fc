// Unit tests of the attention badge's count.
import { describe, expect, it } from 'vitest';
import { notification, planWaits, waitingCount } from './attention';
import type { ApprovalDto, SessionDto } from './types';

function session(status: SessionDto['status'], plan: number, assent: number | null): SessionDto {
  return {
    id: `${status}-${plan}-${assent}`,
    status,
    goal: null,
    summary: null,
    board_outcome: null,
    plan_generation: plan,
    assent_generation: assent,
    assent_expires_at: null,
    created_at: '',
    last_activity_at: '',
  };
}

const approval = (status: string) => ({ status }) as ApprovalDto;

describe('waitingCount', () => {
  it('counts pending approvals and plans without assent', () => {
    // A rejected plan leaves the session `active`: nothing waits any more.
    const sessions = [session('planning', 1, null), session('planning', 2, 1), session('planning', 1, 1), session('executing', 1, null), session('planning', 0, null), session('active', 1, null)];
    expect(sessions.map(planWaits)).toEqual([true, true, false, false, false, false]);
    expect(waitingCount([approval('pending'), approval('approved')], sessions)).toBe(3);
    expect(waitingCount([], [])).toBe(0);
  });

  it('notifies only when more waits than before', () => {
    expect(notification(0, 1)).toBe('Nomos: one thing waits for you');
    expect(notification(1, 3)).toBe('Nomos: 3 things wait for you');
    expect(notification(2, 2)).toBeNull();
    expect(notification(3, 1)).toBeNull();
  });
});
