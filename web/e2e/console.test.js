// End-to-end tests of the operator's console in headless Chromium against the real
// nomos-server with the scripted model stub: a command's output shows live while it runs
// (EXEC-10), Deny takes a reason the model is told (CONTROL-4), a denied task is closed by
// the operator (CONTROL-5), and a session is archived off the board and back (CONTROL-6).
// Each case sets up its own session through the API and waits for content.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });

before(async () => {
  server = await startServer();
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
});

/** A signed-in page at `route`. @param {string} route */
async function open(route) {
  const page = await (await chrome.fresh()).newPage();
  await page.goto(`${server.base}${route}#token=${server.token}`);
  return page;
}

/** Posts a message, retrying while the previous turn still holds the session. @param {string} id @param {string} text */
async function say(id, text) {
  await eventually(`the message ${JSON.stringify(text)} to be accepted`, async () => {
    try {
      await server.api('POST', `/api/sessions/${id}/messages`, { text });
      return true;
    } catch (error) {
      if (/\b409\b/.test(String(error))) return false;
      throw error;
    }
  });
}

/** A session whose destructive command waits for the operator; returns its id. @param {string} marker */
async function waitingSession(marker) {
  server.model.script(
    marker,
    {
      calls: [
        call('set_goal', { goal: `Remove the marker file ${marker}` }),
        call('propose_plan', { steps: [{ title: 'Remove the marker file' }, { title: 'Write back the result' }] }),
      ],
    },
    { text: 'Approve the plan to go ahead.' },
    { calls: [call('run', { host: 'local', command: `rm -f /tmp/nomos-e2e-${marker}` })] },
    { text: 'The rm waits for your approval.' },
  );
  const session = await server.api('POST', '/api/sessions');
  await say(session.id, `remove the marker ${marker}`);
  await eventually('the plan', async () => (await server.api('GET', `/api/sessions/${session.id}`)).status === 'planning');
  await say(session.id, 'approved');
  await eventually('the approval request', async () => (await server.api('GET', `/api/approvals?session_id=${session.id}`)).length === 1);
  return session.id;
}

test('a running command shows its output live, then its stored output (EXEC-10)', async () => {
  const marker = `live-${process.pid}`;
  const command = 'for i in 1 2 3; do echo line$i; sleep 1; done';
  server.model.script(marker, { calls: [call('run', { host: 'local', command })] }, { text: 'Three lines printed.' });
  const session = await server.api('POST', '/api/sessions');
  const page = await open(`/sessions/${session.id}`);
  await page.locator('[data-stream-state="live"]').waitFor();
  await say(session.id, `print three lines ${marker}`);
  const liveOutput = page.locator('[data-live-output]');
  await eventually('the first line while the command runs', async () => /line1/.test((await liveOutput.first().textContent({ timeout: 500 }).catch(() => '')) ?? ''));
  const [running] = await server.api('GET', `/api/sessions/${session.id}/executions`);
  const seen = (await liveOutput.first().textContent()) ?? '';
  assert.ok(!/line3/.test(seen) || running.status === 'running', `the output came only at the end: ${seen}`);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'session-live-output.png'), fullPage: true });
  // At its end the stored output replaces the live text.
  const stored = page.locator(`[data-execution-output="${running.id}"] pre[aria-label="standard output"]`);
  await eventually('the stored output', async () => /line1\s+line2\s+line3/.test((await stored.textContent({ timeout: 500 }).catch(() => '')) ?? ''), 30_000);
  assert.equal(await page.locator('[data-live-output]').count(), 0);
  await page.close();
});

test('Deny takes a reason that the model is told (CONTROL-4), and the operator closes the denied task (CONTROL-5)', async () => {
  const marker = `deny-${process.pid}`;
  const id = await waitingSession(marker);
  server.model.script(marker, { text: 'Understood; I will leave the file.' });
  const page = await open(`/sessions/${id}`);
  const card = page.locator('.activity [data-approval-status="pending"]');
  await card.waitFor();
  await card.getByLabel(/Reason if you deny/).fill('the file is still in use');
  await page.screenshot({ path: path.join(SCREENSHOTS, 'approval-deny-reason.png'), fullPage: true });
  await card.getByRole('button', { name: 'Deny' }).click();
  await eventually('the continuation to ask the model', async () => server.model.left(marker) === 0);
  const told = server.model.requests.filter((r) => JSON.stringify(r).includes(marker)).pop();
  assert.match(JSON.stringify(told), /denied by the operator, who said: the file is still in use/);
  const [approval] = await server.api('GET', `/api/sessions/${id}/approvals`);
  assert.equal(approval.status, 'denied');

  // The denied task stays open; the operator closes it as partial with a note.
  await eventually('the turn to end', async () => (await page.locator('[data-stop]').count()) === 0);
  await page.getByRole('button', { name: 'Close task…' }).click();
  await page.getByLabel('Close as').selectOption('partial');
  await page.getByLabel('Note').fill('left the file; it is in use');
  await page.getByRole('button', { name: 'Close task', exact: true }).click();
  await eventually('the partial status', async () => (await page.locator('[data-session-status]').getAttribute('data-session-status')) === 'partial');
  const stored = await server.api('GET', `/api/sessions/${id}`);
  assert.equal(stored.summary, 'closed by the operator: left the file; it is in use');
  await eventually('the close in the activity log', async () =>
    ((await page.locator('.timeline').textContent()) ?? '').includes('Operator closed the task as partial'),
  );
  assert.equal(await page.getByRole('button', { name: 'Close task…' }).count(), 0, 'a closed task offers no second close');
  await page.close();
});

test('an archived session leaves the board, History shows it under its filter, and it comes back (CONTROL-6)', async () => {
  const marker = `archive-${process.pid}`;
  const kept = `kept-${process.pid}`;
  server.model.script(marker, { text: `Nothing to do for ${marker}.` });
  server.model.script(kept, { text: `Nothing to do for ${kept}.` });
  const session = await server.api('POST', '/api/sessions');
  const other = await server.api('POST', '/api/sessions');
  await say(session.id, `say hello ${marker}`);
  await say(other.id, `say hello ${kept}`);
  for (const id of [session.id, other.id]) {
    await eventually('the answer', async () => (await server.api('GET', `/api/sessions/${id}`)).status === 'done');
  }
  const page = await open(`/sessions/${session.id}`);
  await page.getByRole('button', { name: 'Archive' }).click();
  await page.locator('.page-head [data-archived]').waitFor();
  const board = await open('/');
  await board.getByRole('heading', { name: 'Task board' }).waitFor();
  // The board has loaded once the other session shows.
  await board.locator(`.card[data-session-id="${other.id}"]`).waitFor();
  assert.equal(await board.locator(`.card[data-session-id="${session.id}"]`).count(), 0, 'the archived session is off the board');
  const history = await open('/history?archived=only');
  const row = history.locator(`[data-session-id="${session.id}"]`);
  await row.waitFor();
  assert.equal(await row.locator('[data-archived]').count(), 1);
  assert.equal(await history.getByLabel('Archive').inputValue(), 'only');
  await history.screenshot({ path: path.join(SCREENSHOTS, 'history-archived.png'), fullPage: true });
  await page.getByRole('button', { name: 'Unarchive' }).click();
  await eventually('the session back on the list', async () =>
    (await server.api('GET', '/api/sessions?limit=1000')).some((/** @type {{ id: string }} */ s) => s.id === session.id),
  );
  await page.close();
  await board.close();
  await history.close();
});
