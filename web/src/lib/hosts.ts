// The Hosts page's shapes: the inventory rows and what a reachability check says.

/** `GET /api/hosts`. */
export interface HostDto {
  slug: string;
  address: string;
  tags: string[];
  attributes: Record<string, unknown> | null;
  last_audited_at: string | null;
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

/** The host key fingerprint the knowledge graph recorded, if any (`host_key`, `ssh_fingerprint`). */
export function hostKey(host: HostDto): string | null {
  const attributes = host.attributes ?? {};
  for (const key of ['host_key_fingerprint', 'host_key', 'ssh_fingerprint']) {
    const value = attributes[key];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}
