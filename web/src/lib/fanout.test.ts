import { describe, expect, it } from 'vitest';
import { parseFanout } from './fanout';

const table = [
  'fan-out hosts on apt-get upgrade -y (5 hosts): 2 ok, 1 failed, 2 skipped, 0 cancelled, 0 not finished',
  'host | state | exit | ms | cut | first line | last line | execution',
  'lxc:app1 | ok | 0 | 12 | 0 | 1 upgraded |  | e1',
  'lxc:app2 | ok | 0 | 10 | 0 | 1 upgraded |  | e2',
  'lxc:app3 | failed | 100 | 9 | 0 | E: Could not get lock |  | e3',
  'lxc:app4 | skipped | - | - | 0 | skipped: 1 host(s) failed, max_failures = 1 |  | e4',
  'lxc:app5 | skipped | - | - | 0 | skipped: 1 host(s) failed, max_failures = 1 |  | e5',
  'not started (max_failures = 1 reached): lxc:app4, lxc:app5',
].join('\n');

describe('parseFanout', () => {
  // rule: FLEET-2
  it('reads one row per host with its state, exit and execution', () => {
    const parsed = parseFanout(table);
    expect(parsed?.rows.map((r) => [r.host, r.state, r.exit, r.executionId])).toEqual([
      ['lxc:app1', 'ok', '0', 'e1'],
      ['lxc:app2', 'ok', '0', 'e2'],
      ['lxc:app3', 'failed', '100', 'e3'],
      ['lxc:app4', 'skipped', '-', 'e4'],
      ['lxc:app5', 'skipped', '-', 'e5'],
    ]);
    expect(parsed?.notes).toEqual(['not started (max_failures = 1 reached): lxc:app4, lxc:app5']);
    expect(parsed?.summary).toContain('2 ok, 1 failed, 2 skipped');
  });

  it('is null for a single host result', () => {
    expect(parseFanout('exit 0 (3 ms)\nstdout:\nhi')).toBeNull();
    expect(parseFanout(null)).toBeNull();
  });
});
