// A fan-out's tool result (FLEET-2) read back as rows: the core writes one line per host,
// `host | state | exit | ms | cut | first line | last line | execution`, under a summary
// line that starts with `fan-out`. Rows folded for the output cap are not rows here.

export interface FanoutRow {
  host: string;
  state: string;
  exit: string;
  ms: string;
  cut: string;
  first: string;
  last: string;
  executionId: string;
}

export interface FanoutTable {
  summary: string;
  rows: FanoutRow[];
  notes: string[];
}

/** The table of a `run` result on a group, or null when the result is not one. */
export function parseFanout(result: string | null | undefined): FanoutTable | null {
  if (!result || !result.startsWith('fan-out ')) return null;
  const lines = result.split('\n');
  const rows: FanoutRow[] = [];
  const notes: string[] = [];
  for (const line of lines.slice(2)) {
    const cells = line.split(' | ');
    if (cells.length === 8) {
      const [host, state, exit, ms, cut, first, last, executionId] = cells.map((c) => c.trim());
      rows.push({ host, state, exit, ms, cut, first, last, executionId });
    } else if (line.trim() !== '') {
      notes.push(line);
    }
  }
  return { summary: lines[0], rows, notes };
}
