// What the operator reads of text written for the model: a note (a resume note, a compaction
// summary, a check-in) becomes one short line for the operator, with the full note kept for a
// disclosure; plan-step bookkeeping and tool directives stay out of the operator's view.

import type { ActivityDto } from './types';

const HEADLINE_CHARS = 140;

/** The first sentence of a line, at most `HEADLINE_CHARS` long. */
function firstSentence(line: string): string {
  const end = line.search(/[.!?](\s|$)/);
  const sentence = end === -1 ? line : line.slice(0, end + 1);
  return sentence.length > HEADLINE_CHARS ? `${sentence.slice(0, HEADLINE_CHARS - 1)}…` : sentence;
}

/** The operator's line for a decided command (`approved; \`rm\` on local exited 0: ...`). */
function decisionLine(outcome: string): string {
  const approved = /^approved; (`[^`]*` on \S+) (exited -?\d+|was killed by \S+|completed|failed|cancelled)/.exec(outcome);
  if (approved) return `Resumed after your approval of ${approved[1]} (${approved[2]}).`;
  const denied = /^denied by the operator; (`[^`]*` on \S+) did not run/.exec(outcome);
  if (denied) return `Resumed after you denied ${denied[1]}.`;
  if (/^the approval expired/.test(outcome)) return 'Resumed after an approval expired unanswered (a denial).';
  if (/^the approval was voided/.test(outcome)) return 'Resumed after an approval was voided.';
  return `Resumed after your decision: ${firstSentence(outcome.split(': ')[0])}`;
}

/** One short, operator-facing line for a note. */
export function noteHeadline(note: string): string {
  const line = note.trim().split('\n')[0]?.trim() ?? '';
  const decided = /^The operator decided on the command you asked to run: (.*?)\.?$/.exec(line);
  if (decided) return decisionLine(decided[1]);
  // RESUME-4: what the operator's message or decision meant for the plan.
  const planDecided = /^The operator (approved|rejected) plan generation (\d+) with an explicit decision|^The operator (rejected) plan generation (\d+)/.exec(line);
  if (planDecided) {
    const verb = planDecided[1] ?? planDecided[3];
    const generation = planDecided[2] ?? planDecided[4];
    return `You ${verb} plan generation ${generation}.`;
  }
  const assented = /^The operator's message .* approved plan generation (\d+) \(/.exec(line);
  if (assented) return `Your message approved plan generation ${assented[1]}.`;
  const waits = /was not read as approval: plan generation (\d+) still waits/.exec(line);
  if (waits) return `Your message was not read as approval: plan generation ${waits[1]} still waits for your decision.`;
  if (line.startsWith('The operator reconnected')) return 'Resumed after you reconnected.';
  if (line.startsWith('The operator asked to resume')) return 'Resumed at your request.';
  if (line.startsWith('This session has been idle')) return 'Nomos checked in: the session was idle.';
  if (/earlier messages were summarised/.test(line)) return "Earlier messages were summarised to fit the model's context.";
  const client = /^This session is driven by the MCP client ([^:]+):/.exec(line);
  if (client) return `Driven by the MCP client ${client[1]}.`;
  return firstSentence(line.replace(/^\[Nomos\]\s*/, ''));
}

/** Tools whose calls the operator sees elsewhere: plan-step updates fold into the plan's rows. */
export const FOLDED_TOOLS: readonly string[] = ['update_plan_step'];

/** Whether an activity entry is shown: a plan-step update is already the plan row's status. */
export function activityShown(entry: ActivityDto): boolean {
  return !(entry.kind === 'tool' && FOLDED_TOOLS.includes(entry.title));
}

/** An activity entry's detail for the operator: a tool's result is addressed to the model. */
export function activityDetail(entry: ActivityDto): string | null {
  return entry.kind === 'tool' ? null : entry.detail;
}
