// Unit tests of the Hosts page's shapes.
import { describe, expect, it } from 'vitest';
import { discoveryLine, guestLine, hostKey, hostRows, reachabilityLine, type HostDto } from './hosts';

const host = (attributes: Record<string, unknown> | null): HostDto => ({ slug: 'web1', address: 'web1', tags: [], attributes, last_audited_at: null, proxmox: false, node: null });
const row = (slug: string, extra: Partial<HostDto> = {}): HostDto => ({ ...host(null), slug, ...extra });

describe('hosts', () => {
  it('says a check result in one line', () => {
    expect(reachabilityLine({ slug: 'a', reachable: true, detail: 'this machine', elapsed_ms: 0 })).toBe('reachable (this machine, 0 ms)');
    expect(reachabilityLine({ slug: 'a', reachable: false, detail: 'web1:22: connection refused', elapsed_ms: 3 })).toBe('unreachable: web1:22: connection refused');
  });

  it('finds the recorded host key fingerprint', () => {
    expect(hostKey(host({ host_key: 'SHA256:abc' }))).toBe('SHA256:abc');
    expect(hostKey(host({ os: 'debian' }))).toBeNull();
    expect(hostKey(host(null))).toBeNull();
  });

  // rule: FLEET-4
  it('prefers the fingerprints known_hosts trusts over a recorded attribute', () => {
    const trusted = { ...host({ host_key: 'SHA256:old' }), host_keys: ['SHA256:a', 'SHA256:b'] };
    expect(hostKey(trusted)).toBe('SHA256:a, SHA256:b');
    expect(hostKey({ ...host({ host_key: 'SHA256:old' }), host_keys: [] })).toBe('SHA256:old');
  });

  // rule: FLEET-3
  it('puts each guest under its Proxmox node, and a guest of an unlisted node stays on top', () => {
    const rows = hostRows([
      row('host:pve', { proxmox: true }),
      row('local'),
      row('lxc:nextcloud', { node: 'host:pve', attributes: { vmid: 100, status: 'running', ips: ['10.0.0.5'] } }),
      row('vm:win11', { node: 'host:pve', attributes: { vmid: 201, status: 'stopped', ips: [] } }),
      row('lxc:orphan', { node: 'host:gone' }),
    ]);
    expect(rows.map((r) => [r.host.slug, r.guests.map((g) => g.slug)])).toEqual([
      ['host:pve', ['lxc:nextcloud', 'vm:win11']],
      ['local', []],
      ['lxc:orphan', []],
    ]);
    expect(guestLine(rows[0].guests[0])).toBe('lxc 100 · running · 10.0.0.5 · through host:pve');
    expect(guestLine(rows[0].guests[1])).toBe('vm 201 · stopped · no static address · needs its own SSH address');
  });

  it('says a discovery in one line', () => {
    const found = { slug: 'host:pve', session_id: 's', outcome: 'ok', result: 'host:pve: 3 containers, 2 VMs\nlxc:a | ...', guests: [] };
    expect(discoveryLine(found)).toBe('host:pve: 3 containers, 2 VMs');
    expect(discoveryLine({ ...found, outcome: 'error', result: 'could not connect' })).toBe('discovery failed: could not connect');
  });
});
