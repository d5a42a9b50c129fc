// The History page's state in the URL (`/history?status=done&q=disk`) and the API queries
// of its pages: newest first, each page continuing before the last session of the previous.

import type { SessionStatus } from './types';

/** The statuses the History filter offers. */
export const HISTORY_STATUSES: readonly SessionStatus[] = ['active', 'planning', 'executing', 'awaiting_input', 'done', 'failed', 'partial'];

/** What the History shows. */
export interface HistoryFilter {
  /** One status, or null for all. */
  status: SessionStatus | null;
  /** Text the goal or summary must contain. */
  q: string;
  /** CONTROL-6: archived sessions only, or with the others; absent: the board's sessions. */
  archived?: 'only' | 'include';
}

/** The archive choices the History filter offers (CONTROL-6). */
const ARCHIVED = ['only', 'include'] as const;

/** Reads the filter from a URL query string; unknown statuses are ignored. */
export function parseHistory(search: string): HistoryFilter {
  const params = new URLSearchParams(search);
  const status = params.get('status');
  const archived = ARCHIVED.find((a) => a === params.get('archived'));
  return {
    status: HISTORY_STATUSES.find((s) => s === status) ?? null,
    q: params.get('q')?.trim() ?? '',
    ...(archived ? { archived } : {}),
  };
}

/** The URL query string of a filter (empty when nothing is filtered). */
export function historySearch(filter: HistoryFilter): string {
  const params = new URLSearchParams();
  if (filter.status) params.set('status', filter.status);
  if (filter.q.trim()) params.set('q', filter.q.trim());
  if (filter.archived) params.set('archived', filter.archived);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The `GET /api/sessions` query of one page. */
export function historyQuery(filter: HistoryFilter, limit: number, before: string | null): string {
  const params = new URLSearchParams({ order: 'desc', limit: String(limit) });
  if (filter.status) params.set('status', filter.status);
  if (filter.q.trim()) params.set('q', filter.q.trim());
  if (filter.archived) params.set('archived', filter.archived);
  if (before) params.set('before', before);
  return params.toString();
}

/** Whether another page may follow: a full page does not prove the end. */
export function mayHaveMore(pageLength: number, limit: number): boolean {
  return pageLength === limit;
}
