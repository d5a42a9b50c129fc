// The chat's compact tool-call summary: one chip per tool, with counts and outcomes.

import { FOLDED_TOOLS } from './notes';
import type { TranscriptMessage, TranscriptToolCall } from './types';

/** The calls the chat lists: plan-step updates fold into the plan's rows instead. */
export function shownCalls(calls: readonly TranscriptToolCall[]): TranscriptToolCall[] {
  return calls.filter((call) => !FOLDED_TOOLS.includes(call.name));
}

/** Whether the chat shows a message: never an empty bubble (TURN-3). */
export function messageShown(message: TranscriptMessage): boolean {
  return message.content.trim() !== '' || shownCalls(message.tool_calls).length > 0;
}

/** One chip of a message's tool summary. */
export interface ToolChip {
  name: string;
  count: number;
  /** The worst outcome among the calls (`refused` and `error` show first). */
  outcome: 'ok' | 'refused' | 'error' | 'interrupted' | 'pending';
}

const RANK: Record<ToolChip['outcome'], number> = {
  ok: 0,
  pending: 1,
  interrupted: 2,
  refused: 3,
  error: 4,
};

/** Summarises a message's tool calls by name, in first-call order. */
export function toolSummary(calls: readonly TranscriptToolCall[]): ToolChip[] {
  const chips = new Map<string, ToolChip>();
  for (const call of calls) {
    const outcome: ToolChip['outcome'] = call.outcome ?? 'pending';
    const chip = chips.get(call.name);
    if (!chip) {
      chips.set(call.name, { name: call.name, count: 1, outcome });
      continue;
    }
    chip.count += 1;
    if (RANK[outcome] > RANK[chip.outcome]) chip.outcome = outcome;
  }
  return [...chips.values()];
}

/** The chip's text (`run ×2 · refused`). */
export function chipLabel(chip: ToolChip): string {
  const count = chip.count > 1 ? ` ×${chip.count}` : '';
  const outcome = chip.outcome === 'ok' ? '' : ` · ${chip.outcome}`;
  return `${chip.name}${count}${outcome}`;
}
