// The plan panel's shape: the current generation expanded, older generations collapsed as
// "replaced" (PLAN-7), and whether a step event refers to a step the page knows.

import type { PlanDto, StepDto } from './types';

/** One generation of a plan. */
export interface Generation {
  generation: number;
  steps: StepDto[];
  /** Whether this is the session's current generation. */
  current: boolean;
}

/** Generations newest first; the current one first of all. */
export function generations(plan: PlanDto): Generation[] {
  const byGeneration = new Map<number, StepDto[]>();
  for (const step of plan.steps) {
    const steps = byGeneration.get(step.generation) ?? [];
    steps.push(step);
    byGeneration.set(step.generation, steps);
  }
  return [...byGeneration.entries()]
    .sort(([a], [b]) => b - a)
    .map(([generation, steps]) => ({
      generation,
      steps: [...steps].sort((a, b) => a.seq - b.seq),
      current: generation === plan.generation,
    }));
}

/** Whether the plan holds the step `(generation, seq)`. */
export function knowsStep(plan: PlanDto | null, generation: number, seq: number): boolean {
  return plan?.steps.some((s) => s.generation === generation && s.seq === seq) ?? false;
}

/** How far a step has come: a status never goes back (PLAN-9). */
function progress(status: StepDto['status']): number {
  return status === 'pending' ? 0 : status === 'running' ? 1 : 2;
}

/** The step event fields the plan needs. */
export interface PlanEvent {
  type: string;
  generation?: unknown;
  seq?: unknown;
  steps?: unknown;
  status?: unknown;
  /** SAFE-4: `plan.step.checked`'s verdict and the check's execution. */
  verdict?: { verdict: string; reason?: string };
  execution_id?: unknown;
}

const CLOSED: readonly StepDto['status'][] = ['done', 'failed', 'skipped', 'replaced'];

/**
 * Applies one plan event to the plan the page holds, so that a step event always finds its
 * step: `plan.proposed` carries the new generation's titles, the step events carry their
 * status. Other events leave the plan as it is. Returns a new plan; never mutates.
 */
export function applyPlanEvent(plan: PlanDto | null, event: PlanEvent, at: string): PlanDto | null {
  const generation = Number(event.generation);
  if (!Number.isInteger(generation)) return plan;
  const base: PlanDto = plan ?? { generation: 0, steps: [] };
  if (event.type === 'plan.proposed') {
    const titles = Array.isArray(event.steps) ? event.steps.map(String) : [];
    const added: StepDto[] = titles
      .map((title, index) => ({ title, seq: index + 1 }))
      .filter(({ seq }) => !knowsStep(base, generation, seq))
      .map(({ title, seq }) => ({ generation, seq, title, detail: null, status: 'pending', note: null, started_at: null, finished_at: null }));
    // The digest stays the fetched plan's until the refetch a proposal prompts: a decision
    // sent on a plan proposed again meanwhile is refused by the server (GATE-4).
    return { ...base, generation: Math.max(base.generation, generation), steps: [...base.steps, ...added] };
  }
  const seq = Number(event.seq);
  if (event.type === 'plan.step.started') {
    return update(base, generation, seq, (s) => (progress(s.status) >= 1 ? s : { ...s, status: 'running', started_at: s.started_at ?? at }));
  }
  if (event.type === 'plan.step.checked') {
    // SAFE-4: the check's verdict shows on its step.
    const passed = event.verdict?.verdict === 'passed';
    const reason = passed ? null : (event.verdict?.reason ?? null);
    const executionId = typeof event.execution_id === 'string' ? event.execution_id : null;
    return update(base, generation, seq, (s) =>
      s.check ? { ...s, check: { ...s.check, state: passed ? 'passed' : 'failed', reason, execution_id: executionId } } : s,
    );
  }
  if (event.type === 'plan.step.finished') {
    const status = CLOSED.find((c) => c === event.status);
    if (!status) return plan;
    return update(base, generation, seq, (s) => ({ ...s, status, finished_at: s.finished_at ?? at, started_at: s.started_at ?? at }));
  }
  return plan;
}

function update(plan: PlanDto, generation: number, seq: number, change: (step: StepDto) => StepDto): PlanDto {
  return { ...plan, steps: plan.steps.map((s) => (s.generation === generation && s.seq === seq ? change(s) : s)) };
}

/**
 * Merges a fetched plan into the one the page holds. The fetch may have been answered before
 * events the page already applied: a step keeps the furthest status either side saw, and
 * steps the fetch did not know yet stay. Details, notes and times come from the fetch.
 */
export function mergePlan(held: PlanDto | null, fetched: PlanDto): PlanDto {
  if (!held) return fetched;
  const heldSteps = new Map(held.steps.map((s) => [`${s.generation}.${s.seq}`, s]));
  const merged = fetched.steps.map((f) => {
    const h = heldSteps.get(`${f.generation}.${f.seq}`);
    if (!h || progress(f.status) >= progress(h.status)) return f;
    return { ...f, status: h.status, started_at: f.started_at ?? h.started_at, finished_at: f.finished_at ?? h.finished_at };
  });
  const fetchedKeys = new Set(fetched.steps.map((s) => `${s.generation}.${s.seq}`));
  const newer = held.steps.filter((s) => !fetchedKeys.has(`${s.generation}.${s.seq}`));
  const steps = [...merged, ...newer].sort((a, b) => a.generation - b.generation || a.seq - b.seq);
  // GATE-4: the digest is the fetched plan's, unless the page already saw a newer generation.
  const digest = fetched.generation >= held.generation ? (fetched.digest ?? null) : null;
  return { generation: Math.max(held.generation, fetched.generation), digest, steps };
}
