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
