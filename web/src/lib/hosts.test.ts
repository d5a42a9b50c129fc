// Unit tests of the Hosts page's shapes.
import { describe, expect, it } from 'vitest';
import { hostKey, reachabilityLine, type HostDto } from './hosts';

const host = (attributes: Record<string, unknown> | null): HostDto => ({ slug: 'web1', address: 'web1', tags: [], attributes, last_audited_at: null });

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
});
