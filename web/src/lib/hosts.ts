// The Hosts page's shapes: the inventory rows and what a reachability check says.

/** `GET /api/hosts`. */
export interface HostDto {
  slug: string;
  address: string;
  tags: string[];
  attributes: Record<string, unknown> | null;
  last_audited_at: string | null;
  /** FLEET-4: fingerprints of the keys the SSH executor's known_hosts trusts for the host. */
  host_keys?: string[];
}

/** `POST /api/hosts/{slug}/reachability`. */
export interface ReachabilityDto {
  slug: string;
  reachable: boolean;
  detail: string;
  elapsed_ms: number;
}

/** One line for a check's result. */
export function reachabilityLine(result: ReachabilityDto): string {
  return result.reachable ? `reachable (${result.detail}, ${result.elapsed_ms} ms)` : `unreachable: ${result.detail}`;
}

/**
 * The host key fingerprint: the ones known_hosts trusts (FLEET-4), else the one the knowledge
 * graph recorded (`host_key`, `ssh_fingerprint`), if any.
 */
export function hostKey(host: HostDto): string | null {
  const trusted = (host.host_keys ?? []).filter((key) => key);
  if (trusted.length > 0) return trusted.join(', ');
  const attributes = host.attributes ?? {};
  for (const key of ['host_key_fingerprint', 'host_key', 'ssh_fingerprint']) {
    const value = attributes[key];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}
