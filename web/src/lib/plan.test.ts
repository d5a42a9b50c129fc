// Unit tests of the plan panel's generations and the chat's tool summary.
import { describe, expect, it } from 'vitest';
import { applyPlanEvent, generations, knowsStep, mergePlan } from './plan';
import { chipLabel, toolSummary } from './transcript';
import type { StepDto, TranscriptToolCall } from './types';

function step(generation: number, seq: number, status: StepDto['status']): StepDto {
  return { generation, seq, title: `g${generation} s${seq}`, detail: null, status, note: null, started_at: null, finished_at: null };
}

// rule: PLAN-7
describe('generations', () => {
  it('puts the current generation first and marks older ones not current', () => {
    const plan = { generation: 2, steps: [step(1, 2, 'replaced'), step(1, 1, 'done'), step(2, 1, 'running'), step(2, 2, 'pending')] };
    const groups = generations(plan);
    expect(groups.map((g) => [g.generation, g.current])).toEqual([[2, true], [1, false]]);
    expect(groups[1].steps.map((s) => s.seq)).toEqual([1, 2]);
  });

  it('knows only the steps it holds', () => {
    const plan = { generation: 1, steps: [step(1, 1, 'pending')] };
    expect(knowsStep(plan, 1, 1)).toBe(true);
    expect(knowsStep(plan, 1, 2)).toBe(false);
    expect(knowsStep(plan, 2, 1)).toBe(false);
    expect(knowsStep(null, 1, 1)).toBe(false);
  });
});

function toolCall(name: string, outcome: TranscriptToolCall['outcome']): TranscriptToolCall {
  return { call_id: `${name}-${Math.random()}`, name, arguments: '{}', result: null, outcome, started_at: null, duration_ms: null };
}

describe('toolSummary', () => {
  it('folds calls by name and shows the worst outcome', () => {
    const chips = toolSummary([toolCall('update_plan_step', 'ok'), toolCall('run', 'ok'), toolCall('update_plan_step', 'ok'), toolCall('run', 'refused')]);
    expect(chips.map(chipLabel)).toEqual(['update_plan_step ×2', 'run ×2 · refused']);
  });

  it('marks a call without a result as pending', () => {
    expect(toolSummary([toolCall('run', null)]).map(chipLabel)).toEqual(['run · pending']);
  });
});

// rule: PLAN-9
describe('applyPlanEvent', () => {
  const at = '2026-01-01T00:00:00Z';
  it('places step events right after the plan was proposed, without a fetch', () => {
    let plan = applyPlanEvent(null, { type: 'plan.proposed', generation: 1, steps: ['List', 'Remove'] }, at);
    plan = applyPlanEvent(plan, { type: 'plan.step.started', generation: 1, seq: 2 }, at);
    expect(knowsStep(plan, 1, 2)).toBe(true);
    expect(plan?.steps.map((s) => [s.seq, s.title, s.status])).toEqual([[1, 'List', 'pending'], [2, 'Remove', 'running']]);
    plan = applyPlanEvent(plan, { type: 'plan.step.finished', generation: 1, seq: 2, status: 'done' }, at);
    expect(plan?.steps[1].status).toBe('done');
  });

  it('keeps what a fetched plan knew when the catch-up replays its proposal', () => {
    const fetched = { generation: 1, steps: [{ ...step(1, 1, 'done'), title: 'List', detail: 'ls /tmp' }] };
    const plan = applyPlanEvent(fetched, { type: 'plan.proposed', generation: 1, steps: ['List'] }, at);
    expect(plan?.steps).toEqual(fetched.steps);
    // A replayed start never moves a finished step back.
    expect(applyPlanEvent(plan, { type: 'plan.step.started', generation: 1, seq: 1 }, at)?.steps[0].status).toBe('done');
  });

  it('moves to a new generation and ignores an unknown status', () => {
    const plan = applyPlanEvent({ generation: 1, steps: [step(1, 1, 'done')] }, { type: 'plan.proposed', generation: 2, steps: ['Again'] }, at);
    expect(plan?.generation).toBe(2);
    expect(applyPlanEvent(plan, { type: 'plan.step.finished', generation: 2, seq: 1, status: 'bogus' }, at)).toBe(plan);
  });
});

// rule: GATE-4
describe('the digest of the plan as shown', () => {
  const at = '2026-01-01T00:00:00Z';
  it('comes from the fetch, and the refetch after a proposal replaces it', () => {
    const fetched = { generation: 1, digest: 'aa', steps: [step(1, 1, 'pending')] };
    expect(mergePlan(null, fetched).digest).toBe('aa');
    // A replayed proposal keeps what the fetch said; the server refuses a stale one.
    const proposed = applyPlanEvent(fetched, { type: 'plan.proposed', generation: 1, steps: ['List'] }, at);
    expect(proposed?.digest).toBe('aa');
    expect(mergePlan(proposed, { ...fetched, digest: 'bb' }).digest).toBe('bb');
    // A stale fetch of an older generation never lends its digest to a newer plan.
    const newer = { generation: 2, digest: null, steps: [step(2, 1, 'pending')] };
    expect(mergePlan(newer, fetched).digest).toBeNull();
  });
});

describe('mergePlan', () => {
  it('keeps a status the page saw that a stale fetch had not', () => {
    const held = { generation: 2, steps: [step(1, 1, 'done'), step(2, 1, 'running')] };
    const fetched = { generation: 1, steps: [{ ...step(1, 1, 'running'), detail: 'ls' }] };
    const merged = mergePlan(held, fetched);
    expect(merged.generation).toBe(2);
    expect(merged.steps.map((s) => [s.generation, s.seq, s.status, s.detail])).toEqual([
      [1, 1, 'done', 'ls'],
      [2, 1, 'running', null],
    ]);
  });

  it('takes the fetched status when it has come further', () => {
    const merged = mergePlan({ generation: 1, steps: [step(1, 1, 'pending')] }, { generation: 1, steps: [step(1, 1, 'failed')] });
    expect(merged.steps[0].status).toBe('failed');
  });
});

// rule: SAFE-4
describe('a step check on the plan panel', () => {
  const at = '2026-01-01T00:00:00Z';
  it('shows the verdict of plan.step.checked on its step', () => {
    const check = { host: 'web', command: 'systemctl is-active nginx', expect_exit: 0, expect_output: null, state: 'pending' as const, reason: null, execution_id: null };
    const fetched = { generation: 1, steps: [{ ...step(1, 1, 'running'), check }] };
    const failed = applyPlanEvent(
      fetched,
      { type: 'plan.step.checked', generation: 1, seq: 1, execution_id: 'e1', verdict: { verdict: 'failed', reason: 'it exited 3' } },
      at,
    );
    expect(failed?.steps[0].check).toEqual({ ...check, state: 'failed', reason: 'it exited 3', execution_id: 'e1' });
    const passed = applyPlanEvent(failed, { type: 'plan.step.checked', generation: 1, seq: 1, execution_id: 'e2', verdict: { verdict: 'passed' } }, at);
    expect(passed?.steps[0].check?.state).toBe('passed');
    expect(passed?.steps[0].check?.reason).toBe(null);
  });
});
