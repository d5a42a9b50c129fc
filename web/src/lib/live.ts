// EXEC-10: the live output of running commands, by execution id, until the stored output
// replaces it. The server caps the stream; the page keeps at most LIVE_CHARS of each.
import type { LiveOutput } from './stream';

/** The most characters kept per execution (the tail). */
export const LIVE_CHARS = 256 * 1024;

/** Live text by execution id. */
export type LiveMap = Record<string, string>;

/** The map with `chunk` appended to its execution's text (its tail kept). */
export function appendLive(map: LiveMap, chunk: LiveOutput, cap = LIVE_CHARS): LiveMap {
  const text = (map[chunk.execution_id] ?? '') + chunk.text;
  return { ...map, [chunk.execution_id]: text.length > cap ? text.slice(text.length - cap) : text };
}

/** The map without the executions that are no longer running: their stored output shows. */
export function pruneLive(map: LiveMap, executions: { id: string; status: string }[]): LiveMap {
  const running = new Set(executions.filter((e) => e.status === 'running').map((e) => e.id));
  const kept = Object.entries(map).filter(([id]) => running.has(id));
  return kept.length === Object.keys(map).length ? map : Object.fromEntries(kept);
}
