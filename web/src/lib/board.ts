// The task board: which column a session belongs in, and the board's filters.

import type { ApprovalDto, SessionDto } from './types';
import { parseTime } from './time';
import { planWaits } from './attention';

/** A board column. */
export type Column = 'running' | 'waiting' | 'done' | 'partial' | 'failed';

/** Columns in display order, with their headings. */
export const COLUMNS: readonly { id: Column; title: string }[] = [
  { id: 'running', title: 'Running' },
  { id: 'waiting', title: 'Waiting for you' },
  { id: 'done', title: 'Done' },
  { id: 'partial', title: 'Partial' },
  { id: 'failed', title: 'Failed' },
];

/**
 * The column of a session. A terminal status decides; an open session waits for the operator
 * when it asked a question, has an approval pending (SWEEP-3's two cases) or its plan waits for
 * the operator's decision (GATE-4); an open session
 * whose board outcome is already set shows it (WRITEBACK-2); anything else is running.
 */
export function columnOf(session: SessionDto, pendingApprovals: ReadonlySet<string>): Column {
  switch (session.status) {
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    case 'partial':
      return 'partial';
    case 'awaiting_input':
      return 'waiting';
  }
  if (pendingApprovals.has(session.id) || planWaits(session)) return 'waiting';
  switch (session.board_outcome) {
    case 'partial':
      return 'partial';
    case 'failure':
      return 'failed';
    default:
      return 'running';
  }
}

/** The board's filters. */
export interface BoardFilter {
  /** Words that must all appear in the goal, summary or id (case-insensitive). */
  text: string;
  /** Columns shown; empty means all. */
  columns: readonly Column[];
}

/** Whether a session passes the text filter. */
export function matchesText(session: SessionDto, text: string): boolean {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = `${session.goal ?? ''} ${session.summary ?? ''} ${session.id}`.toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** Sessions grouped by column, each column newest activity first. */
export function groupSessions(
  sessions: readonly SessionDto[],
  approvals: readonly ApprovalDto[],
  filter: BoardFilter,
): Record<Column, SessionDto[]> {
  const pending = new Set(approvals.filter((a) => a.status === 'pending').map((a) => a.session_id));
  const groups: Record<Column, SessionDto[]> = {
    running: [],
    waiting: [],
    done: [],
    partial: [],
    failed: [],
  };
  for (const session of sessions) {
    const column = columnOf(session, pending);
    if (filter.columns.length > 0 && !filter.columns.includes(column)) continue;
    if (!matchesText(session, filter.text)) continue;
    groups[column].push(session);
  }
  for (const column of Object.values(groups)) {
    column.sort(
      (a, b) => (parseTime(b.last_activity_at) ?? 0) - (parseTime(a.last_activity_at) ?? 0),
    );
  }
  return groups;
}
