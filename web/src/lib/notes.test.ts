// Unit tests of what the operator reads of notes and tool bookkeeping.
import { describe, expect, it } from 'vitest';
import { activityDetail, activityShown, noteHeadline } from './notes';
import type { ActivityDto } from './types';

describe('noteHeadline', () => {
  // rule: RESUME-4
  it('says in one line what a message or a decision meant for the plan', () => {
    expect(
      noteHeadline('The operator approved plan generation 2 with an explicit decision (steps 1..3; declared commands: step 1 [config_mutation] local: touch /tmp/x). Advance it with update_plan_step and run; do not call propose_plan again.'),
    ).toBe('You approved plan generation 2.');
    expect(noteHeadline('The operator rejected plan generation 1, saying “not now”. Nothing of it will run.')).toBe('You rejected plan generation 1.');
    expect(noteHeadline('The operator rejected plan generation 3. Nothing of it will run.')).toBe('You rejected plan generation 3.');
    expect(noteHeadline('The operator\'s message “yes, go” approved plan generation 1 (steps 1..2; declared commands: step 1 [config_mutation] local: x). Advance it.')).toBe(
      'Your message approved plan generation 1.',
    );
    expect(noteHeadline('The operator\'s message “wait” was not read as approval: plan generation 4 still waits for the operator\'s approval. Do not run commands.')).toBe(
      'Your message was not read as approval: plan generation 4 still waits for your decision.',
    );
  });

  it('turns a resume note after an approval into one line for the operator', () => {
    const note = [
      'The operator decided on the command you asked to run: approved; `rm -f /tmp/old.log` on local exited 0: (no output).',
      'The operator\'s last message: “approved”',
      'Plan generation 1 has 1 of 3 steps closed. The plan is in flight: advance it with update_plan_step and run; do not call propose_plan again.',
      'Continue from here.',
    ].join('\n');
    const line = noteHeadline(note);
    expect(line).toBe('Resumed after your approval of `rm -f /tmp/old.log` on local (exited 0).');
    expect(line).not.toMatch(/propose_plan|Continue from here/);
  });

  it('says a denial, a reconnect, a manual resume, a check-in and a compaction plainly', () => {
    expect(noteHeadline('The operator decided on the command you asked to run: denied by the operator; `rm -rf /c` on web1 did not run.\nContinue from here.')).toBe(
      'Resumed after you denied `rm -rf /c` on web1.',
    );
    expect(noteHeadline('The operator reconnected; your last turn was cut off. Pick up where you left off.')).toBe('Resumed after you reconnected.');
    expect(noteHeadline('The operator asked to resume this session.\nContinue from here.')).toBe('Resumed at your request.');
    expect(noteHeadline('This session has been idle for a while.\nGoal: “x”')).toBe('Nomos checked in: the session was idle.');
    expect(noteHeadline("[Nomos] 12 earlier messages were summarised to fit the model's context (no detail below is new).")).toBe(
      "Earlier messages were summarised to fit the model's context.",
    );
  });

  it('keeps the first sentence of any other note, cut to a short line', () => {
    expect(noteHeadline('Nomos could not resume this session: 3 attempts got no usable reply. Last error: 500.')).toBe(
      'Nomos could not resume this session: 3 attempts got no usable reply.',
    );
    expect(noteHeadline('x'.repeat(300)).length).toBe(140);
  });
});

function entry(kind: string, title: string, detail: string | null): ActivityDto {
  return { at: '', key: `${kind}/${title}`, kind, title, detail, state: 'done', generation: null, seq: null, execution_id: null, approval_id: null, duration_ms: null };
}

describe('activity for the operator', () => {
  it('folds plan-step updates into the plan and keeps other tools', () => {
    expect(activityShown(entry('tool', 'update_plan_step', null))).toBe(false);
    expect(activityShown(entry('tool', 'update_entity_attributes', null))).toBe(true);
    expect(activityShown(entry('step', 'update_plan_step', null))).toBe(true);
  });

  it('never shows what a tool told the model', () => {
    expect(activityDetail(entry('tool', 'propose_plan', 'refused: do not call propose_plan again'))).toBeNull();
    expect(activityDetail(entry('command', 'ls', 'read_only: ls only reads; exit 0'))).toBe('read_only: ls only reads; exit 0');
  });
});

describe('the chat for the operator', async () => {
  const { messageShown, shownCalls } = await import('./transcript');
  const call = (name: string) => ({ call_id: name, name, arguments: '{}', result: 'ok', outcome: 'ok' as const, started_at: null, duration_ms: null });
  it('folds plan-step updates and hides a message that held only those', () => {
    expect(shownCalls([call('update_plan_step'), call('run')]).map((c) => c.name)).toEqual(['run']);
    const only = { id: 'm', role: 'assistant', content: ' ', created_at: '', tool_calls: [call('update_plan_step')] };
    expect(messageShown(only)).toBe(false);
    expect(messageShown({ ...only, tool_calls: [call('run')] })).toBe(true);
    expect(messageShown({ ...only, content: 'Done.' })).toBe(true);
  });
});
