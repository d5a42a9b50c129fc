// Unit tests of the event cursor: dedup and gap detection of resumed streams.
import { describe, expect, it } from 'vitest';
import { EventCursor, parseEventId } from './cursor';

describe('EventCursor', () => {
  it('applies ids in order and counts nothing', () => {
    const cursor = new EventCursor('contiguous');
    expect([1, 2, 3].map((id) => cursor.accept(id))).toEqual(['next', 'next', 'next']);
    expect(cursor.last).toBe(3);
    expect(cursor.duplicates).toBe(0);
    expect(cursor.gaps).toBe(0);
  });

  it('drops a replay after a reconnect as duplicates', () => {
    const cursor = new EventCursor('contiguous', 5);
    expect(cursor.accept(4)).toBe('duplicate');
    expect(cursor.accept(5)).toBe('duplicate');
    expect(cursor.accept(6)).toBe('next');
    expect(cursor.duplicates).toBe(2);
    expect(cursor.last).toBe(6);
  });

  it('reports a hole in a session stream as a gap and moves on', () => {
    const cursor = new EventCursor('contiguous', 2);
    expect(cursor.accept(5)).toBe('gap');
    expect(cursor.gaps).toBe(1);
    expect(cursor.accept(6)).toBe('next');
    // The missed ids never count as new later.
    expect(cursor.accept(3)).toBe('duplicate');
  });

  it('accepts holes on the global stream, whose ids only increase', () => {
    const cursor = new EventCursor('increasing', 10);
    expect(cursor.accept(14)).toBe('next');
    expect(cursor.gaps).toBe(0);
    expect(cursor.accept(14)).toBe('duplicate');
  });

  it('refuses ids that are not safe integers', () => {
    const cursor = new EventCursor('contiguous');
    expect(cursor.accept(Number.NaN)).toBe('duplicate');
    expect(cursor.last).toBe(0);
  });
});

describe('parseEventId', () => {
  it('reads decimal ids and refuses anything else', () => {
    expect(parseEventId('42')).toBe(42);
    expect(parseEventId('')).toBeNull();
    expect(parseEventId('-1')).toBeNull();
    expect(parseEventId('4e2')).toBeNull();
    expect(parseEventId('99999999999999999999')).toBeNull();
  });
});
