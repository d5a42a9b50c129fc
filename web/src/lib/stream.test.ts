// Unit tests of the event stream: the URL it opens, dedup of replays, gaps, reconnect states.
import { describe, expect, it } from 'vitest';
import { defaultBackoff, EventStream, streamUrl, type SourceLike, type StreamState } from './stream';
import type { EventRecordDto } from './events.gen';

/** A stand-in for the browser's EventSource, which Node does not have; the e2e suite drives the real one. */
class ScriptedSource implements SourceLike {
  static opened: ScriptedSource[] = [];
  readyState = 0;
  onopen: SourceLike['onopen'] = null;
  onerror: SourceLike['onerror'] = null;
  readonly listeners = new Map<string, ((ev: MessageEvent) => void)[]>();
  readonly url: string;

  constructor(url: string) {
    this.url = url;
    ScriptedSource.opened.push(this);
  }
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close(): void {
    this.readyState = 2;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.call(this, new Event('open'));
  }
  fail(readyState: number): void {
    this.readyState = readyState;
    this.onerror?.call(this, new Event('error'));
  }
  emit(kind: string, id: number | string, event: Record<string, unknown> = {}): void {
    const record = { global_seq: Number(id), session_id: 's', seq: Number(id), at: '2026-11-30T08:00:00.000Z', event: { type: kind, ...event } };
    for (const listener of this.listeners.get(kind) ?? []) {
      listener(new MessageEvent(kind, { data: JSON.stringify(record), lastEventId: String(id) }));
    }
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function open(after = 0) {
  ScriptedSource.opened = [];
  const applied: [number, string][] = [];
  const states: StreamState[] = [];
  const stream = new EventStream({
    path: '/api/sessions/s/events',
    numbering: 'contiguous',
    after,
    token: async () => 'tok en',
    onEvent: (record: EventRecordDto, _kind, verdict) => applied.push([record.seq, verdict]),
    onState: (state) => states.push(state),
    source: ScriptedSource,
    backoff: () => 0,
  });
  stream.start();
  return { stream, applied, states };
}

describe('streamUrl', () => {
  it('puts the token and the resume id in the query', () => {
    expect(streamUrl('/api/events', 'a+b/c', 0)).toBe('/api/events?access_token=a%2Bb%2Fc');
    expect(streamUrl('/api/events', 't', 17)).toBe('/api/events?access_token=t&last_event_id=17');
    expect(streamUrl('/api/events', null, 0)).toBe('/api/events');
  });
});

describe('EventStream', () => {
  it('applies each event once, dropping what a resumed stream replays', async () => {
    const { stream, applied } = open();
    await tick();
    const source = ScriptedSource.opened[0];
    source.open();
    source.emit('task.status', 1);
    source.emit('task.goal', 2);
    source.emit('task.status', 1);
    source.emit('task.goal', 2);
    source.emit('plan.proposed', 3);
    expect(applied).toEqual([[1, 'next'], [2, 'next'], [3, 'next']]);
    expect(stream.cursor.duplicates).toBe(2);
    stream.stop();
  });

  it('passes a gap on so the page refetches, and counts it', async () => {
    const { stream, applied } = open();
    await tick();
    const source = ScriptedSource.opened[0];
    source.emit('task.status', 1);
    source.emit('turn.done', 4);
    expect(applied).toEqual([[1, 'next'], [4, 'gap']]);
    expect(stream.cursor.gaps).toBe(1);
    stream.stop();
  });

  it('shows reconnecting while the browser reconnects by itself', async () => {
    const { stream, states } = open();
    await tick();
    const source = ScriptedSource.opened[0];
    source.open();
    source.fail(0);
    expect(states).toEqual(['connecting', 'live', 'reconnecting']);
    source.open();
    expect(stream.state).toBe('live');
    expect(ScriptedSource.opened).toHaveLength(1);
    stream.stop();
  });

  it('reopens a closed stream by hand with a fresh token and the last applied id', async () => {
    const { stream, applied } = open();
    await tick();
    const first = ScriptedSource.opened[0];
    expect(first.url).toBe('/api/sessions/s/events?access_token=tok+en');
    first.emit('task.status', 1);
    first.emit('task.goal', 2);
    first.fail(2);
    expect(stream.state).toBe('reconnecting');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ScriptedSource.opened).toHaveLength(2);
    const second = ScriptedSource.opened[1];
    expect(second.url).toBe('/api/sessions/s/events?access_token=tok+en&last_event_id=2');
    second.emit('task.goal', 2);
    second.emit('plan.proposed', 3);
    expect(applied.map(([seq]) => seq)).toEqual([1, 2, 3]);
    stream.stop();
    expect(stream.state).toBe('closed');
  });

  it('resumes after the id it was given', async () => {
    const { stream, applied } = open(5);
    await tick();
    const source = ScriptedSource.opened[0];
    expect(source.url).toContain('last_event_id=5');
    source.emit('task.status', 5);
    source.emit('task.status', 6);
    expect(applied).toEqual([[6, 'next']]);
    stream.stop();
  });

  it('counts an event without an id instead of applying it silently', async () => {
    const { stream, applied } = open();
    await tick();
    ScriptedSource.opened[0].emit('task.status', '');
    expect(applied).toEqual([]);
    expect(stream.malformed).toBe(1);
    stream.stop();
  });
});

describe('defaultBackoff', () => {
  it('doubles from 1 s up to 10 s', () => {
    expect([1, 2, 3, 4, 5, 9].map(defaultBackoff)).toEqual([1000, 2000, 4000, 8000, 10000, 10000]);
  });
});
