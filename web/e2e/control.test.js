// End-to-end tests of the operator's controls in headless Chromium against the real
// nomos-server with the scripted model stub: the Stop button stops a running command and
// ends the turn (CONTROL-1), and the operations page lists the open grants live and revokes
// them (CONTROL-2, CONTROL-3), saying who granted and who decided (AUDIT-1).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;
/** @type {import('playwright-core').Page} */
let page;

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });

/** Whether a live process has `needle` in its command line (`pgrep -f`). @param {string} needle */
function running(needle) {
  try {
    return execFileSync('pgrep', ['-f', needle]).toString().trim() !== '';
  } catch {
    return false;
  }
}

before(async () => {
  server = await startServer();
  chrome = await launchBrowser();
  page = await (await chrome.fresh()).newPage();
  await page.goto(server.link);
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
});

test('Stop ends a running command and the turn, and says so (CONTROL-1)', async () => {
  const sleep = `sleep 30.${process.pid}01`;
  server.model.queue({ calls: [call('run', { host: 'local', command: sleep })] });
  await page.getByRole('button', { name: 'New task' }).click();
  await page.waitForURL(/\/new$/);
  await page.getByLabel('Message').fill('wait half a minute');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/\/sessions\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop() ?? '';
  await eventually('the sleep to run', () => running(sleep));
  const stop = page.getByRole('button', { name: 'Stop' });
  await stop.waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'session-stop.png'), fullPage: true });
  await stop.click();
  const error = page.locator('[data-turn-error]');
  await error.waitFor();
  assert.match((await error.textContent()) ?? '', /stopped by the operator/);
  assert.ok(!running(sleep), `${sleep} survived the stop`);
  await eventually('the Stop button to go', async () => (await page.locator('[data-stop]').count()) === 0);
  const [execution] = await server.api('GET', `/api/sessions/${id}/executions`);
  assert.equal(execution.status, 'cancelled');
  assert.equal(execution.error, 'stopped by the operator');
  await eventually('the stop in the activity log', async () =>
    ((await page.locator('.timeline').textContent()) ?? '').includes('Operator stopped the turn'),
  );
});

test('operations lists the open window and the waiting command live and revokes both (CONTROL-2, CONTROL-3)', async () => {
  const session = await server.api('POST', '/api/sessions');
  const ops = await (await chrome.fresh()).newPage();
  await ops.goto(`${server.base}/operations#token=${server.token}`);
  await ops.locator('[data-stream-state="live"]').waitFor();
  await ops.getByText('No plan approval is open.').waitFor();

  server.model.queue(
    {
      calls: [
        call('set_goal', { goal: 'Clear the scratch directory' }),
        call('propose_plan', { steps: [{ title: 'Remove the scratch directory' }, { title: 'Write back the result' }] }),
      ],
    },
    { text: 'Approve the plan to go ahead.' },
    { calls: [call('run', { host: 'local', command: `rm -rf /tmp/nomos-e2e-scratch-${process.pid}` })] },
    { text: 'The rm waits for your approval.' },
  );
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: 'clear the scratch directory' });
  await eventually('the plan', async () => (await server.api('GET', `/api/sessions/${session.id}`)).status === 'planning');
  await eventually('the first turn to end', async () => server.model.remaining() === 2);
  await eventually('the assent to be accepted', async () => {
    try {
      await server.api('POST', `/api/sessions/${session.id}/messages`, { text: 'approved' });
      return true;
    } catch {
      return false;
    }
  });
  // The page updates live: the window and the waiting command appear without a reload.
  const window = ops.locator(`[data-window-session="${session.id}"]`);
  await window.waitFor();
  const text = (await window.textContent()) ?? '';
  assert.match(text, /Clear the scratch directory/);
  assert.match(text, /plan generation 1/);
  assert.match(text, /granted by operator/);
  assert.match(text, /expires in \d+ min/);
  const waiting = ops.locator('[data-grant-approval]');
  await waiting.waitFor();
  await ops.screenshot({ path: path.join(SCREENSHOTS, 'operations-grants.png'), fullPage: true });

  await waiting.getByRole('button', { name: 'Cancel request' }).click();
  await ops.getByText('No command waits for approval.').waitFor();
  await window.getByRole('button', { name: 'Revoke' }).click();
  await ops.getByText('No plan approval is open.').waitFor();

  const [approval] = await server.api('GET', `/api/sessions/${session.id}/approvals`);
  assert.equal(approval.status, 'cancelled');
  assert.equal(approval.decided_by, 'operator');
  const [execution] = await server.api('GET', `/api/sessions/${session.id}/executions`);
  assert.equal(execution.status, 'cancelled');
  assert.equal(execution.started_at, null, 'the cancelled command never ran');
  // AUDIT-1: the session page's card says who decided, and its log who revoked.
  await page.goto(`${server.base}/sessions/${session.id}`);
  const card = page.locator(`.activity [data-approval-id="${approval.id}"]`);
  await card.waitFor();
  assert.equal(await card.locator('[data-decided-by]').getAttribute('data-decided-by'), 'operator');
  await eventually('the revoke in the activity log', async () =>
    ((await page.locator('.timeline').textContent()) ?? '').includes('Operator revoked the approval of plan generation 1'),
  );
  await ops.close();
});
