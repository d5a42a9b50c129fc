// Unit tests of the live output of running commands (EXEC-10).
import { describe, expect, it } from 'vitest';
import { appendLive, pruneLive } from './live';

describe('live output', () => {
  // rule: EXEC-10
  it('appends chunks per execution and keeps the tail under the cap', () => {
    let map = appendLive({}, { execution_id: 'a', stream: 'stdout', text: 'line1\n' });
    map = appendLive(map, { execution_id: 'b', stream: 'stderr', text: 'oops' });
    map = appendLive(map, { execution_id: 'a', stream: 'stdout', text: 'line2\n' }, 8);
    expect(map).toEqual({ a: '1\nline2\n', b: 'oops' });
  });

  // rule: EXEC-10
  it('drops the live text of executions that ended, so their stored output shows', () => {
    const map = { a: 'x', b: 'y' };
    expect(pruneLive(map, [{ id: 'a', status: 'running' }, { id: 'b', status: 'completed' }])).toEqual({ a: 'x' });
    expect(pruneLive(map, [{ id: 'a', status: 'running' }, { id: 'b', status: 'running' }])).toBe(map);
  });
});
