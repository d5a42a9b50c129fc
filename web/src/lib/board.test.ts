// Unit tests of the board grouping and filters.
import { describe, expect, it } from 'vitest';
import { columnOf, groupSessions } from './board';
import type { ApprovalDto, SessionDto } from './types';

function session(id: string, status: SessionDto['status'], extra: Partial<SessionDto> = {}): SessionDto {
  return {
    id,
    status,
    goal: `goal of ${id}`,
    summary: null,
    board_outcome: null,
    plan_generation: 0,
    assent_generation: null,
    assent_expires_at: null,
    created_at: '2026-11-30T08:00:00.000Z',
    last_activity_at: '2026-11-30T08:00:00.000Z',
    ...extra,
  };
}

function approval(sessionId: string, status = 'pending'): ApprovalDto {
  return {
    id: `a-${sessionId}`,
    session_id: sessionId,
    execution_id: `e-${sessionId}`,
    command: 'rm -f x',
    host: 'local',
    hosts: ['local'],
    class: 'destructive',
    reason: '`rm` deletes files',
    generation: 1,
    step_seq: null,
    status,
    requested_at: '2026-11-30T08:00:00.000Z',
    expires_at: '2026-11-30T08:30:00.000Z',
    decided_at: null,
    decided_by: null,
  };
}

describe('columnOf', () => {
  const none = new Set<string>();

  it('puts open sessions in Running', () => {
    for (const status of ['active', 'planning', 'executing'] as const) {
      expect(columnOf(session('s', status), none)).toBe('running');
    }
  });

  it('puts terminal sessions in their own columns', () => {
    expect(columnOf(session('s', 'done'), none)).toBe('done');
    expect(columnOf(session('s', 'failed'), none)).toBe('failed');
    expect(columnOf(session('s', 'partial'), none)).toBe('partial');
  });

  it('waits for the operator on a question or a pending approval', () => {
    expect(columnOf(session('s', 'awaiting_input'), none)).toBe('waiting');
    expect(columnOf(session('s', 'executing'), new Set(['s']))).toBe('waiting');
  });

  // rule: GATE-4
  it('puts a session whose plan waits for the operator under Waiting for you, not Running', () => {
    expect(columnOf(session('s', 'planning', { plan_generation: 1 }), none)).toBe('waiting');
    expect(columnOf(session('s', 'planning', { plan_generation: 2, assent_generation: 1 }), none)).toBe('waiting');
    // Approved (its window is open), or rejected (the session is active again): running.
    expect(columnOf(session('s', 'executing', { plan_generation: 1, assent_generation: 1 }), none)).toBe('running');
    expect(columnOf(session('s', 'active', { plan_generation: 1 }), none)).toBe('running');
    // A goal without a plan yet is still the model's work.
    expect(columnOf(session('s', 'planning', { plan_generation: 0 }), none)).toBe('running');
  });

  // rule: WRITEBACK-2
  it('shows an open session whose outcome so far is partial as Partial', () => {
    expect(columnOf(session('s', 'executing', { board_outcome: 'partial' }), none)).toBe('partial');
  });

  it('lets a terminal status win over a stale approval', () => {
    expect(columnOf(session('s', 'done'), new Set(['s']))).toBe('done');
  });
});

describe('groupSessions', () => {
  const sessions = [
    session('a', 'executing', { goal: 'Check disk space on hubris', last_activity_at: '2026-11-30T08:01:00.000Z' }),
    session('b', 'executing', { goal: 'Restart nginx', last_activity_at: '2026-11-30T08:05:00.000Z' }),
    session('c', 'done', { goal: 'Audit backups' }),
  ];

  it('groups by column, newest activity first', () => {
    const groups = groupSessions(sessions, [], { text: '', columns: [] });
    expect(groups.running.map((s) => s.id)).toEqual(['b', 'a']);
    expect(groups.done.map((s) => s.id)).toEqual(['c']);
    expect(groups.waiting).toEqual([]);
  });

  it('moves a session with a pending approval to Waiting for you, but not one with a decided approval', () => {
    const groups = groupSessions(sessions, [approval('a'), approval('b', 'approved')], { text: '', columns: [] });
    expect(groups.waiting.map((s) => s.id)).toEqual(['a']);
    expect(groups.running.map((s) => s.id)).toEqual(['b']);
  });

  it('filters by every word of the text, case-insensitively', () => {
    const groups = groupSessions(sessions, [], { text: 'DISK hubris', columns: [] });
    expect(groups.running.map((s) => s.id)).toEqual(['a']);
    expect(groups.done).toEqual([]);
  });

  it('filters by column', () => {
    const groups = groupSessions(sessions, [], { text: '', columns: ['done'] });
    expect(groups.running).toEqual([]);
    expect(groups.done.map((s) => s.id)).toEqual(['c']);
  });
});
