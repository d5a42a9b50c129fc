import { describe, expect, it } from 'vitest';
import type { ExecutionDto } from './types';
import { undos } from './undo';

function net(id: string, reason: string, status = 'completed', exit_code = 0): ExecutionDto {
  return {
    id,
    session_id: 's',
    kind: 'safety',
    host: 'host:pve',
    command: 'x',
    class: 'config_mutation',
    reason,
    status,
    generation: 1,
    step_seq: 1,
    created_at: '2026-12-03T10:00:00Z',
    started_at: null,
    finished_at: null,
    output: { exit_code, signal: null, stdout: '', stderr: '', stdout_cut: 0, stderr_cut: 0, duration_ms: 1 },
    error: null,
  };
}

describe('undos', () => {
  // rule: SAFE-1
  it('offers Rollback for a completed snapshot and Restore for a completed backup, newest first', () => {
    const list = undos([
      net('a', 'SAFE-2: backup of /etc/app.conf before execution x'),
      net('b', 'SAFE-1: snapshot nomos-1 on lxc:nextcloud (vmid 100 on host:pve) before execution y'),
      net('c', 'SAFE-1: prune of nomos-0 before execution y'),
      net('d', 'SAFE-1: snapshot nomos-2 on lxc:nextcloud (vmid 100 on host:pve) before execution z', 'failed'),
      net('e', 'SAFE-2: backup of /etc/b before execution w', 'completed', 1),
      { ...net('f', 'SAFE-2: backup of /etc/c before execution v'), kind: 'command' },
    ]);
    expect(list.map((u) => [u.execution.id, u.action])).toEqual([
      ['b', 'rollback'],
      ['a', 'restore'],
    ]);
  });
});
