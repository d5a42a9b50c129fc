// The demo mode's tour: the message that starts it (the demo model's `TOUR_MESSAGE` in
// `crates/nomos-llm/src/tour/mod.rs`; the end-to-end tour test holds the two together) and
// the board's start of it, a new session whose first message is that one.

import type { Api } from './api';

/** The operator message that starts the tour. */
export const TOUR_MESSAGE = 'Take the tour';

/** Starts the tour in a new session; resolves with the session's id. */
export async function startTour(api: Pick<Api, 'createSession' | 'postMessage'>): Promise<string> {
  const session = await api.createSession();
  await api.postMessage(session.id, TOUR_MESSAGE);
  return session.id;
}
