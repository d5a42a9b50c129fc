import { describe, expect, it } from 'vitest';
import { TOUR_MESSAGE, startTour } from './tour';
import type { SessionDto } from './types';

describe('startTour', () => {
  it('creates a session and sends the tour message as its first message', async () => {
    const calls: string[] = [];
    const id = await startTour({
      createSession: async () => {
        calls.push('create');
        return { id: 's-1' } as SessionDto;
      },
      postMessage: async (session: string, text: string) => {
        calls.push(`message ${session} ${text}`);
        return null;
      },
    });
    expect(id).toBe('s-1');
    expect(calls).toEqual(['create', `message s-1 ${TOUR_MESSAGE}`]);
    expect(TOUR_MESSAGE).toBe('Take the tour');
  });
});
