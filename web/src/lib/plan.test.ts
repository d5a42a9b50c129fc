// Unit tests of the plan panel's generations and the chat's tool summary.
import { describe, expect, it } from 'vitest';
import { generations, knowsStep } from './plan';
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
