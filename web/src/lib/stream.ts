// One live SSE connection per view: opens the stream with the token in `?access_token=`,
// resumes after a drop without duplicates or gaps (EventSource sends `Last-Event-ID` itself;
// a manual reopen after a token refresh passes `?last_event_id=`), and says when it is
// reconnecting.

import { EventCursor, type Numbering, parseEventId, type Verdict } from './cursor';
import { EVENT_KINDS, type EventRecordDto } from './events.gen';

/** Every durable event kind the server sends, generated from the OpenAPI document. */
export { EVENT_KINDS };

/** EXEC-10: a chunk of a running command's output (`event: execution.output`, not durable). */
export interface LiveOutput {
  execution_id: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

/** The connection's state, shown to the operator. */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The parts of `EventSource` the stream uses. */
export interface SourceLike {
  readonly readyState: number;
  onopen: ((this: SourceLike, ev: Event) => unknown) | null;
  onerror: ((this: SourceLike, ev: Event) => unknown) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
}

/** What the stream needs from its page. */
export interface StreamOptions {
  /** The stream's path (`/api/sessions/{id}/events` or `/api/events`). */
  path: string;
  /** How ids are numbered on this stream. */
  numbering: Numbering;
  /** Resume after this id (0: from the start of a session stream). */
  after?: number;
  /** A fresh token, or null without auth. */
  token: () => Promise<string | null>;
  /** A durable event, with what its id means. Duplicates are not passed on. */
  onEvent: (record: EventRecordDto, kind: string, verdict: Verdict) => void;
  /** Streamed model text (not durable). */
  onDelta?: (text: string) => void;
  /** EXEC-10: a running command's output (not durable; the stored output replaces it). */
  onOutput?: (output: LiveOutput) => void;
  /** The connection's state changed. */
  onState?: (state: StreamState) => void;
  /** Called after the stream closed on an error (maybe a 401); may refresh auth. */
  onClosed?: () => Promise<void>;
  /** The EventSource constructor (the browser's by default). */
  source?: new (url: string) => SourceLike;
  /** Delay before a manual reopen, by attempt (1, 2, 3...). */
  backoff?: (attempt: number) => number;
}

const CLOSED = 2;

/** The default reopen delay: 1 s, 2 s, 4 s... at most 10 s. */
export function defaultBackoff(attempt: number): number {
  return Math.min(10_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** Builds a stream URL with the token and the id to resume after. */
export function streamUrl(path: string, token: string | null, after: number): string {
  const params = new URLSearchParams();
  if (token) params.set('access_token', token);
  if (after > 0) params.set('last_event_id', String(after));
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}

/** A live event stream; `start` opens it, `stop` closes it for good. */
export class EventStream {
  readonly cursor: EventCursor;
  state: StreamState = 'closed';
  /** Events that arrived without a usable id (logged, never applied silently). */
  malformed = 0;
  private source: SourceLike | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private readonly options: StreamOptions;

  constructor(options: StreamOptions) {
    this.options = options;
    this.cursor = new EventCursor(options.numbering, options.after ?? 0);
  }

  /** Opens the stream. */
  start(): void {
    this.stopped = false;
    void this.open('connecting');
  }

  /** Reopens with a fresh token, resuming after the last applied id (after a token refresh). */
  reopen(): void {
    if (this.stopped) return;
    this.closeSource();
    void this.open('reconnecting');
  }

  /** Closes the stream for good. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closeSource();
    this.setState('closed');
  }

  private setState(state: StreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.options.onState?.(state);
  }

  private closeSource(): void {
    if (this.source) {
      this.source.onopen = null;
      this.source.onerror = null;
      this.source.close();
      this.source = null;
    }
  }

  private async open(state: StreamState): Promise<void> {
    this.setState(state);
    let token: string | null;
    try {
      token = await this.options.token();
    } catch {
      token = null;
    }
    if (this.stopped) return;
    const Source = this.options.source ?? (globalThis.EventSource as unknown as new (url: string) => SourceLike);
    const source = new Source(streamUrl(this.options.path, token, this.cursor.last));
    this.source = source;
    source.onopen = () => {
      this.attempt = 0;
      this.setState('live');
    };
    source.onerror = () => {
      if (this.source !== source) return;
      if (source.readyState === CLOSED) {
        // The server refused or ended the stream for good (a 401, a restart): reopen by
        // hand with a fresh token and the last applied id.
        this.closeSource();
        this.setState('reconnecting');
        this.scheduleReopen();
      } else {
        // The browser reconnects by itself and sends `Last-Event-ID`.
        this.setState('reconnecting');
      }
    };
    for (const kind of EVENT_KINDS) {
      source.addEventListener(kind, (ev) => this.handle(kind, ev));
    }
    source.addEventListener('message', (ev) => this.handle('message', ev));
    source.addEventListener('execution.output', (ev) => {
      try {
        const data = JSON.parse(String(ev.data)) as { execution_id?: unknown; stream?: unknown; text?: unknown };
        if (typeof data.execution_id === 'string' && typeof data.text === 'string') {
          this.options.onOutput?.({ execution_id: data.execution_id, stream: data.stream === 'stderr' ? 'stderr' : 'stdout', text: data.text });
        }
      } catch {
        this.malformed += 1;
        console.warn('nomos: an execution.output event carried no JSON', ev.data);
      }
    });
    source.addEventListener('text.delta', (ev) => {
      try {
        const data = JSON.parse(String(ev.data)) as { text?: unknown };
        if (typeof data.text === 'string') this.options.onDelta?.(data.text);
      } catch {
        this.malformed += 1;
        console.warn('nomos: a text.delta event carried no JSON', ev.data);
      }
    });
  }

  private scheduleReopen(): void {
    if (this.stopped) return;
    this.attempt += 1;
    const delay = (this.options.backoff ?? defaultBackoff)(this.attempt);
    this.timer = setTimeout(() => {
      this.timer = null;
      void (async () => {
        await this.options.onClosed?.();
        if (!this.stopped) await this.open('reconnecting');
      })();
    }, delay);
  }

  private handle(kind: string, ev: MessageEvent): void {
    const id = parseEventId(ev.lastEventId);
    let record: EventRecordDto;
    try {
      record = JSON.parse(String(ev.data)) as EventRecordDto;
    } catch {
      this.malformed += 1;
      console.warn(`nomos: event ${kind} #${ev.lastEventId} carried no JSON`, ev.data);
      return;
    }
    if (typeof record?.event?.type !== 'string') {
      this.malformed += 1;
      console.warn(`nomos: event ${kind} #${ev.lastEventId} carried no event`, ev.data);
      return;
    }
    if (id === null) {
      this.malformed += 1;
      console.warn(`nomos: event ${kind} arrived without an id`, record);
      return;
    }
    const verdict = this.cursor.accept(id);
    if (verdict === 'duplicate') return;
    if (verdict === 'gap') console.warn(`nomos: events missed before #${id}; refetching`);
    this.options.onEvent(record, record.event.type, verdict);
  }
}
