// The Hosts page's shapes: the inventory rows, what a reachability check says, and a
// Proxmox node's guests (FLEET-3).

/** `GET /api/hosts`. */
export interface HostDto {
  slug: string;
  address: string;
  tags: string[];
  attributes: Record<string, unknown> | null;
  last_audited_at: string | null;
  /** FLEET-4: fingerprints of the keys the SSH executor's known_hosts trusts for the host. */
  host_keys?: string[];
  /** A Proxmox node whose guests can be discovered. */
  proxmox: boolean;
  /** For a discovered container or VM: the node it runs on. */
  node: string | null;
}

/** `POST /api/hosts/{slug}/discover`. */
export interface DiscoveryDto {
  slug: string;
  session_id: string;
  outcome: string;
  result: string;
  guests: { slug: string; kind: string; name: string; attributes: Record<string, unknown> }[];
}

/** A top-level row of the page: a host, and the guests of it when it is a Proxmox node. */
export interface HostRow {
  host: HostDto;
  guests: HostDto[];
}

/** Puts each discovered guest under its node (when the node is listed), in list order. */
export function hostRows(hosts: HostDto[]): HostRow[] {
  const nodes = new Set(hosts.filter((h) => h.proxmox).map((h) => h.slug));
  const rows: HostRow[] = hosts.filter((h) => !(h.node && nodes.has(h.node))).map((host) => ({ host, guests: [] }));
  for (const guest of hosts) {
    if (!guest.node || !nodes.has(guest.node)) continue;
    rows.find((row) => row.host.slug === guest.node)?.guests.push(guest);
  }
  return rows;
}

/** One guest in one line: `lxc 100 · running · 10.0.0.5 · through host:pve`. */
export function guestLine(guest: HostDto): string {
  const attributes = guest.attributes ?? {};
  const kind = guest.slug.split(':')[0];
  const parts = [`${kind} ${String(attributes.vmid ?? '?')}`, String(attributes.status ?? 'unknown')];
  const ips = Array.isArray(attributes.ips) ? attributes.ips.map(String) : [];
  parts.push(ips.length > 0 ? ips.join(', ') : 'no static address');
  parts.push(kind === 'lxc' ? `through ${guest.node ?? '?'}` : 'needs its own SSH address');
  return parts.join(' · ');
}

/** One line for a discovery's result. */
export function discoveryLine(found: DiscoveryDto): string {
  const first = found.result.split('\n')[0] ?? '';
  return found.outcome === 'ok' ? first : `discovery failed: ${found.result}`;
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
