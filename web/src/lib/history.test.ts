// Unit tests of the History page's URL state and paging queries.
import { describe, expect, it } from 'vitest';
import { historyQuery, historySearch, mayHaveMore, parseHistory } from './history';

describe('history URL', () => {
  it('round-trips the status and the text', () => {
    const filter = parseHistory('?status=done&q=%20disk%20space%20');
    expect(filter).toEqual({ status: 'done', q: 'disk space' });
    expect(historySearch(filter)).toBe('?status=done&q=disk+space');
    expect(parseHistory(historySearch(filter))).toEqual(filter);
  });

  it('ignores an unknown status and writes nothing for no filter', () => {
    expect(parseHistory('?status=bogus')).toEqual({ status: null, q: '' });
    expect(historySearch({ status: null, q: '  ' })).toBe('');
  });
});

describe('history pages', () => {
  it('asks newest first and continues before the last session', () => {
    expect(historyQuery({ status: null, q: '' }, 25, null)).toBe('order=desc&limit=25');
    expect(historyQuery({ status: 'failed', q: 'nginx' }, 25, 'abc')).toBe('order=desc&limit=25&status=failed&q=nginx&before=abc');
  });

  it('offers more only after a full page', () => {
    expect(mayHaveMore(25, 25)).toBe(true);
    expect(mayHaveMore(3, 25)).toBe(false);
  });

  // rule: CONTROL-6
  it('keeps the archive filter in the URL and asks the API for it', () => {
    const filter = parseHistory('?archived=only&q=disk');
    expect(filter).toEqual({ status: null, q: 'disk', archived: 'only' });
    expect(historySearch(filter)).toBe('?q=disk&archived=only');
    expect(historyQuery(filter, 25, null)).toBe('order=desc&limit=25&q=disk&archived=only');
    expect(parseHistory('?archived=bogus').archived).toBeUndefined();
  });
});
