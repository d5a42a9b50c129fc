// End-to-end tests of the operator UI in headless Chromium against the real nomos-server,
// with the scripted model stub. The tests run in order and share one server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;
/** @type {import('playwright-core').Page} */
let page;
/** Requests the page made to hosts other than the server. */
/** @type {string[]} */
const foreign = [];
/** The session the main scenario runs in. */
let sessionId = '';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-files-'));
const victim = path.join(work, 'old.log');

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });
/** @param {number} seq @param {string} status */
const step = (seq, status) => call('update_plan_step', { seq, status });

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer();
  chrome = await launchBrowser();
  page = await chrome.context.newPage();
  chrome.context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin !== server.base && url.protocol !== 'data:') foreign.push(request.url());
  });
});

after(async () => {
  await chrome?.close();
  await server?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

test('a bad token is refused with a message and the login stays', async () => {
  await page.goto(server.base + '/');
  await page.getByRole('heading', { name: 'Sign in to Nomos' }).waitFor();
  // Nothing was refused yet: no error on a first visit.
  assert.equal(await page.getByRole('alert').count(), 0);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'login.png') });
  await page.getByLabel('Operator token').fill('not-the-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('The server did not accept your token').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('nomos.auth')), null);
});

test('the printed token link signs in and the token leaves the address bar', async () => {
  await page.goto(server.link);
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
  assert.ok(!page.url().includes('token'), `token still in ${page.url()}`);
  const stored = await page.evaluate(() => sessionStorage.getItem('nomos.auth'));
  assert.equal(JSON.parse(stored ?? '{}').accessToken, server.token);
  // Signed in across a reload, from sessionStorage.
  await page.reload();
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
});

test('a chat message streams text and the plan panel shows the proposed plan', async () => {
  fs.writeFileSync(victim, 'old log line\n');
  await page.getByRole('button', { name: 'New task' }).click();
  await page.waitForURL(/\/sessions\/[0-9a-f-]{36}$/);
  sessionId = page.url().split('/').pop() ?? '';
  server.model.queue(
    {
      text: 'I will clean up the old log file. First I set the goal and propose a plan.',
      chunks: 12,
      chunkDelayMs: 120,
      calls: [
        call('set_goal', { goal: 'Remove the old log file on local' }),
        call('propose_plan', {
          steps: [
            { title: 'List the log directory', detail: `ls ${work}` },
            { title: 'Remove old.log', detail: `rm -f ${victim}` },
            { title: 'Write back: update_entity_attributes', detail: 'record the clean-up' },
          ],
        }),
      ],
    },
    { text: 'The plan is ready: step 1 lists the directory, step 2 removes old.log. Reply "approved" to go ahead.' },
  );
  await page.getByLabel('Message').fill('Please remove the old log file on local');
  await page.getByRole('button', { name: 'Send' }).click();
  // The model's text appears while it streams, before the message is stored.
  await page.locator('[data-streaming="true"]').waitFor({ timeout: 10_000 });
  await page.getByText('Reply "approved" to go ahead.').waitFor();
  const steps = page.locator('.plan [data-current="true"] > li');
  await eventually('three plan steps', async () => (await steps.count()) === 3);
  assert.match((await steps.nth(1).textContent()) ?? '', /Remove old\.log/);
  await page.getByRole('heading', { name: 'Remove the old log file on local' }).waitFor();
  // ACTIVITY-5: no approval card in the chat.
  assert.equal(await page.locator('.chat .approval').count(), 0);
});

test('an approved plan runs read-only at once and asks for the destructive command in operations (GATE-6, ACTIVITY-5)', async () => {
  server.model.queue(
    { calls: [step(1, 'running'), call('run', { host: 'local', command: `ls ${work}` })] },
    { calls: [step(1, 'done'), step(2, 'running'), call('run', { host: 'local', command: `rm -f ${victim}` })] },
    { text: 'Removing old.log is destructive; it waits for your approval in Operations.' },
  );
  await page.getByLabel('Message').fill('approved');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('it waits for your approval in Operations').waitFor();
  // The session's activity panel shows one card, for the rm only.
  const cards = page.locator('.activity .approval');
  await eventually('one approval card in the activity panel', async () => (await cards.count()) === 1);
  assert.match((await cards.first().locator('.command').textContent()) ?? '', /^rm -f /);
  assert.equal(await page.locator('.chat .approval').count(), 0);
  // GATE-6: the read-only `ls` ran with no approval at all.
  const approvals = await server.api('GET', `/api/approvals?session_id=${sessionId}`);
  assert.equal(approvals.length, 1);
  assert.match(approvals[0].command, /^rm -f /);
  // The approval names why the command is destructive and the plan step it belongs to.
  assert.ok(approvals[0].reason, 'the approval carries its reason');
  assert.equal(typeof approvals[0].step_seq, 'number');
  const executions = await server.api('GET', `/api/sessions/${sessionId}/executions`);
  const ls = executions.find((/** @type {any} */ e) => e.command.startsWith('ls '));
  assert.equal(ls?.status, 'completed');
  assert.ok(fs.existsSync(victim), 'nothing may be removed before the approval');
});

test('approving from operations runs the command and the open session page updates live', async () => {
  server.model.queue(
    {
      calls: [
        step(2, 'done'),
        step(3, 'running'),
        call('update_entity_attributes', { slug: 'local', kind: 'host', attributes: { old_log_removed: true } }),
        step(3, 'done'),
      ],
    },
    { calls: [call('complete_task', { outcome: 'success', summary: 'Removed old.log on local and wrote the clean-up back.' })] },
    { text: 'Done: old.log is gone.' },
  );
  const ops = await chrome.context.newPage();
  // sessionStorage is per tab: a new tab signs in with the token link, as an operator would.
  await ops.goto(`${server.base}/operations#token=${server.token}`);
  const card = ops.locator('.pending .approval');
  await card.waitFor();
  assert.equal(await card.count(), 1);
  const text = (await card.textContent()) ?? '';
  for (const part of [`rm -f ${victim}`, 'local', 'destructive', 'Reason', 'Remove old.log', 'Expires']) {
    assert.ok(text.includes(part), `the card lacks ${part}: ${text}`);
  }
  await ops.screenshot({ path: path.join(SCREENSHOTS, 'operations.png'), fullPage: true });
  await card.getByRole('button', { name: 'Approve' }).click();
  await ops.getByText('Nothing is waiting for your approval.').waitFor();
  // Recent executions are newest first: the approved rm heads the list once it ran.
  await eventually('the rm first in recent executions', async () => {
    const first = (await ops.locator('.executions li').first().textContent()) ?? '';
    return first.includes(`rm -f ${victim}`) && first.includes('completed');
  });
  // The session page was left open: its stream brings the outcome without a reload.
  await page.getByText('Done: old.log is gone.').waitFor({ timeout: 20_000 });
  await page.locator('[data-session-status="done"]').waitFor();
  await eventually('the rm shown done in the activity', async () => {
    const states = await page.locator('.timeline li').evaluateAll((items) =>
      items.map((li) => `${li.getAttribute('data-state')} ${li.textContent}`),
    );
    return states.some((s) => s.startsWith('done') && s.includes('rm -f'));
  });
  assert.ok(!fs.existsSync(victim), 'the approved rm ran on the host');
  // Recent executions show the output of what ran.
  await ops.reload();
  const rm = ops.locator('.executions li', { hasText: 'rm -f' });
  await rm.waitFor();
  assert.equal(await rm.getAttribute('data-status'), 'completed');
  await ops.close();
});

test('a finished session shows nothing running and sits in Done on the board (ACTIVITY-3)', async () => {
  await page.reload();
  await page.locator('[data-session-status="done"]').waitFor();
  await page.locator('.timeline li').first().waitFor();
  const states = await page.locator('.timeline li').evaluateAll((items) => items.map((li) => li.getAttribute('data-state')));
  assert.ok(states.length > 5, `activity: ${states}`);
  assert.ok(!states.includes('running') && !states.includes('stalled'), `activity: ${states}`);
  const stepStates = await page.locator('.plan li[data-status]').evaluateAll((items) => items.map((li) => li.getAttribute('data-status')));
  assert.deepEqual(stepStates, ['done', 'done', 'done']);
  // Real times: every entry's time is the server's timestamp.
  const times = await page.locator('.timeline li time').evaluateAll((items) => items.map((t) => t.getAttribute('datetime')));
  const activity = await server.api('GET', `/api/sessions/${sessionId}/activity`);
  assert.deepEqual([...times].reverse(), activity.map((/** @type {any} */ entry) => entry.at));
  await page.screenshot({ path: path.join(SCREENSHOTS, 'session.png'), fullPage: true });
});

test('the board sorts sessions into Done, Waiting for you and Running, and filters them', async () => {
  // A second task, left waiting for the approval of a destructive command.
  const waiting = await server.api('POST', '/api/sessions');
  server.model.queue(
    {
      calls: [
        call('set_goal', { goal: 'Free disk space on local' }),
        call('propose_plan', { steps: [{ title: 'Delete the cache', detail: 'rm -rf cache' }, { title: 'Write back the result' }] }),
      ],
    },
    { text: 'Approve the plan to go ahead.' },
    { calls: [step(1, 'running'), call('run', { host: 'local', command: `rm -rf ${work}/cache` })] },
    { text: 'The rm waits for your approval.' },
  );
  await server.api('POST', `/api/sessions/${waiting.id}/messages`, { text: 'Free some disk space on local' });
  await eventually('the plan to be proposed', async () => (await server.api('GET', `/api/sessions/${waiting.id}`)).status === 'planning');
  await eventually('the first turn to end', async () => server.model.remaining() === 2);
  await eventually('the message to be accepted', async () => {
    try {
      await server.api('POST', `/api/sessions/${waiting.id}/messages`, { text: 'go ahead' });
      return true;
    } catch {
      return false;
    }
  });
  await eventually('an approval to be pending', async () => (await server.api('GET', `/api/approvals?session_id=${waiting.id}`)).length === 1);
  // A third task that has only just started: no goal yet.
  await server.api('POST', '/api/sessions');
  await page.getByRole('link', { name: 'Board' }).click();
  await page.locator('[data-column="done"] li', { hasText: 'Remove the old log file on local' }).waitFor();
  await page.locator('[data-column="waiting"] li', { hasText: 'Free disk space on local' }).waitFor();
  await page.locator('[data-column="running"] li', { hasText: 'No goal yet' }).waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'board.png'), fullPage: true });
  await page.getByLabel('Filter by goal').fill('disk');
  await eventually('the filter to hide the other tasks', async () => (await page.locator('.board li').count()) === 1);
  await page.getByLabel('Filter by goal').fill('');
  // Deny the waiting command so later tests start from a quiet server.
  const [pending] = await server.api('GET', `/api/approvals?session_id=${waiting.id}`);
  server.model.queue({ text: 'Understood, I will not delete the cache.' });
  await server.api('POST', `/api/approvals/${pending.id}/decision`, { decision: 'deny' });
  await eventually('the denial to be answered', async () => server.model.remaining() === 0);
});

test('a reload mid-stream loses and duplicates nothing', async () => {
  const long = Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of a long answer.`).join(' ');
  server.model.queue({ text: long, chunks: 30, chunkDelayMs: 100 });
  await page.goto(`${server.base}/sessions/${sessionId}`);
  await page.locator('[data-stream-state="live"]').waitFor();
  await page.getByLabel('Message').fill('Tell me what you did, at length');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-streaming="true"]').waitFor();
  await page.reload();
  await page.locator('.messages li[data-message-id]', { hasText: 'Line 30 of a long answer.' }).waitFor({ timeout: 20_000 });
  await eventually('the page to match the server', async () => {
    const transcript = await server.api('GET', `/api/sessions/${sessionId}/transcript`);
    const shown = await page.locator('.messages li[data-message-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-message-id')));
    const expected = transcript.filter((/** @type {any} */ m) => m.content.trim() || m.tool_calls.length).map((/** @type {any} */ m) => m.id);
    return JSON.stringify(shown) === JSON.stringify(expected);
  });
  await eventually('the streamed draft to give way to the stored message', async () => (await page.locator('[data-streaming="true"]').count()) === 0);
  const ids = await page.locator('.messages li[data-message-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-message-id')));
  assert.equal(new Set(ids).size, ids.length, 'a message is shown twice');
  assert.equal(await page.getByText('Line 30 of a long answer.').count(), 1);
  const keys = await page.locator('.timeline li').evaluateAll((items) => items.map((li) => li.getAttribute('data-key')));
  assert.equal(new Set(keys).size, keys.length, 'an activity entry is shown twice');
});

test('a dropped stream shows reconnecting, then resumes without gaps or duplicates', async () => {
  await page.locator('[data-stream-state="live"]').waitFor();
  await server.kill();
  await page.locator('[data-stream-state="reconnecting"]').waitFor({ timeout: 15_000 });
  await server.restart();
  await page.locator('[data-stream-state="live"]').waitFor({ timeout: 30_000 });
  server.model.queue({ text: 'Still here after the restart.' });
  await page.getByLabel('Message').fill('Are you still there?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Still here after the restart.').waitFor();
  assert.equal(await page.getByText('Still here after the restart.').count(), 1);
  assert.equal(await page.locator('[data-gaps]').count(), 0, 'the resumed stream had a gap');
});

test('a model error shows inline with Retry and never resumes by itself (TURN-1)', async () => {
  const before = server.model.requests.length;
  // Not a context overflow: that one is compacted and retried once (TURN-9).
  server.model.queue({ status: 400, body: JSON.stringify({ error: { message: 'unknown model: nope-7b' } }) });
  // From the keyboard: Enter sends.
  await page.getByLabel('Message').fill('Check the disks');
  await page.getByLabel('Message').press('Enter');
  const error = page.locator('[data-turn-error]');
  await error.waitFor();
  assert.match((await error.textContent()) ?? '', /400|unknown model/);
  // Nothing resumes by itself: after a pause the model has still been asked only once.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(server.model.requests.length, before + 1);
  server.model.queue({ text: 'Retried: the disks are fine.' });
  await error.getByRole('button', { name: 'Retry' }).click();
  await page.getByText('Retried: the disks are fine.').waitFor();
  await eventually('the error to clear', async () => (await page.locator('[data-turn-error]').count()) === 0);
});

test('the phone width shows the session stacked and usable', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${server.base}/sessions/${sessionId}`);
  await page.getByLabel('Message').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'session-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('every control on every page has an accessible name', async () => {
  for (const route of ['/', `/sessions/${sessionId}`, '/operations']) {
    await page.goto(server.base + route);
    await page.locator('[data-stream-state="live"]').waitFor();
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('input, textarea, select, button, a[href]')]
        .filter((el) => {
          const labelled = 'labels' in el && /** @type {HTMLInputElement} */ (el).labels?.length;
          const named = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.textContent?.trim();
          return !labelled && !named;
        })
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    assert.deepEqual(unnamed, [], `unnamed controls on ${route}`);
  }
});

test('the page made no request to any other host', () => {
  assert.deepEqual(foreign, []);
});
