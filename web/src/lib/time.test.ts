// Unit tests of time formatting from server timestamps.
import { describe, expect, it } from 'vitest';
import { formatAge, formatClock, formatDateTime, formatDuration, formatUntil, parseTime } from './time';

const AT = '2026-11-30T08:15:42.123Z';
const MS = Date.UTC(2026, 10, 30, 8, 15, 42, 123);

describe('parseTime', () => {
  it('reads the server RFC 3339 timestamps, with or without an offset', () => {
    expect(parseTime(AT)).toBe(MS);
    expect(parseTime('2026-11-30T09:15:42.123+01:00')).toBe(MS);
  });

  it('refuses what is not a server timestamp', () => {
    expect(parseTime(null)).toBeNull();
    expect(parseTime('')).toBeNull();
    expect(parseTime('yesterday')).toBeNull();
    expect(parseTime('2026-11-30')).toBeNull();
    expect(parseTime('2026-13-45T99:00:00Z')).toBeNull();
  });
});

// rule: ACTIVITY-2
describe('formatClock', () => {
  it('shows the persisted time, never the present', () => {
    expect(formatClock(AT, 'UTC')).toBe('08:15:42');
    expect(formatClock(AT, 'Europe/Berlin')).toBe('09:15:42');
  });

  it('shows a dash for a missing time instead of inventing one', () => {
    expect(formatClock(null, 'UTC')).toBe('—');
    expect(formatClock('garbage', 'UTC')).toBe('—');
  });
});

describe('formatDateTime', () => {
  it('shows date and minutes', () => {
    expect(formatDateTime(AT, 'UTC')).toBe('2026-11-30 08:15');
  });
});

describe('formatAge', () => {
  it('counts from the timestamp to now', () => {
    expect(formatAge(AT, MS + 2_000)).toBe('just now');
    expect(formatAge(AT, MS + 42_000)).toBe('42 s ago');
    expect(formatAge(AT, MS + 5 * 60_000)).toBe('5 min ago');
    expect(formatAge(AT, MS + 3 * 3_600_000)).toBe('3 h ago');
    expect(formatAge(AT, MS + 3 * 86_400_000)).toBe('3 d ago');
  });

  it('treats a server clock slightly ahead as just now', () => {
    expect(formatAge(AT, MS - 3_000)).toBe('just now');
  });
});

describe('formatDuration', () => {
  it('picks a readable unit', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1_250)).toBe('1.2 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(120_000)).toBe('2 min');
    expect(formatDuration(3_780_000)).toBe('1 h 3 min');
  });

  it('shows a dash for no duration', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(-5)).toBe('—');
  });
});

// rule: GATE-7
describe('formatUntil', () => {
  it('counts down to an expiry and says expired after it', () => {
    expect(formatUntil(AT, MS - 29 * 60_000 - 5_000)).toBe('in 29 min');
    expect(formatUntil(AT, MS - 40_000)).toBe('in 40 s');
    expect(formatUntil(AT, MS)).toBe('expired');
    expect(formatUntil(AT, MS + 1)).toBe('expired');
  });
});
