// The position of an event stream: which event ids were seen, so that a resumed stream
// neither repeats nor skips anything without the page knowing.

/** What an incoming event id means to the page. */
export type Verdict =
  /** The next event: apply it. */
  | 'next'
  /** Already seen (a replay after a reconnect): ignore it, counted. */
  | 'duplicate'
  /** Events were skipped before this one: apply it and refetch what was missed, counted. */
  | 'gap';

/** How a stream numbers its events. */
export type Numbering =
  /** A session stream: `seq` is 1, 2, 3... with no holes, so a hole is a gap. */
  | 'contiguous'
  /** The global stream: `global_seq` only increases; holes are normal. */
  | 'increasing';

/** The last id a stream applied, with counts of what it refused or missed. */
export class EventCursor {
  /** The highest id applied (0: none yet). */
  last: number;
  /** Events ignored because they were seen already. */
  duplicates = 0;
  /** Times events were missed before one that arrived. */
  gaps = 0;
  readonly numbering: Numbering;

  constructor(numbering: Numbering, last = 0) {
    this.numbering = numbering;
    this.last = last;
  }

  /** Judges an id and, unless it is a duplicate, moves the cursor to it. */
  accept(id: number): Verdict {
    if (!Number.isSafeInteger(id) || id <= this.last) {
      this.duplicates += 1;
      return 'duplicate';
    }
    const gap = this.numbering === 'contiguous' && id !== this.last + 1;
    this.last = id;
    if (gap) {
      this.gaps += 1;
      return 'gap';
    }
    return 'next';
  }
}

/** Parses an SSE `lastEventId` into a number, or null when it is not a non-negative integer. */
export function parseEventId(text: string): number | null {
  if (!/^\d+$/.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}
