// Unit tests of the API client's query strings.
import { describe, expect, it } from 'vitest';
import { executionsQuery } from './api';

describe('executionsQuery', () => {
  it('asks for the newest page with a limit', () => {
    expect(executionsQuery({ order: 'desc', limit: 30 })).toBe('order=desc&limit=30');
  });

  it('defaults to oldest first and 100', () => {
    expect(executionsQuery({})).toBe('limit=100');
  });

  it('passes the cursor and statuses, encoded', () => {
    expect(executionsQuery({ status: 'running,pending_approval', order: 'desc', limit: 30, before: 'a b' })).toBe(
      'status=running%2Cpending_approval&order=desc&limit=30&before=a+b',
    );
  });
});
