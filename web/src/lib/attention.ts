// What waits for the operator: pending approvals, and proposed plans not yet assented to.

import type { ApprovalDto, SessionDto } from './types';

/** Whether a session's current plan waits for the operator's assent (GATE-4). */
export function planWaits(session: SessionDto): boolean {
  return session.status === 'planning' && session.plan_generation > 0 && session.assent_generation !== session.plan_generation;
}

/** How many things wait for the operator: pending approvals plus plans waiting for assent. */
export function waitingCount(approvals: readonly ApprovalDto[], sessions: readonly SessionDto[]): number {
  return approvals.filter((a) => a.status === 'pending').length + sessions.filter(planWaits).length;
}

/** The notification to show when more waits than before, or null. */
export function notification(before: number, now: number): string | null {
  if (now <= before) return null;
  return now === 1 ? 'Nomos: one thing waits for you' : `Nomos: ${now} things wait for you`;
}
