// End-to-end tests of the plan decision in headless Chromium against the real nomos-server
// with the scripted model stub: the plan panel lists every declared command with its class
// and host (GATE-9), a waiting plan sits under "Waiting for you" on the board, Approve opens
// the window so the declared command runs without a card, and Reject closes the plan and the
// model hears why (GATE-4). Each case sets up its own session and scripts its own replies.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-plan-'));

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer();
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

/** Waits until the session's transcript holds `text`. @param {string} id @param {string} text */
async function transcriptHas(id, text) {
  await eventually(`"${text}" in the transcript`, async () => {
    const transcript = await server.api('GET', `/api/sessions/${id}/transcript`);
    return transcript.some((/** @type {any} */ m) => m.content.includes(text));
  });
}

/**
 * A session whose plan declares `ls DIR` (read-only) and `touch FILE` (a change) on `local`
 * and waits for the operator; `afterwards(dir, file)` are the replies once it is decided.
 * @param {(dir: string, file: string) => object[]} afterwards
 */
async function waitingPlan(afterwards) {
  const tag = `case-${randomUUID().slice(0, 8)}`;
  const dir = fs.mkdtempSync(path.join(work, 'case-'));
  const file = path.join(dir, 'marker');
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('set_goal', { goal: `Touch the marker (${tag})` }),
        call('propose_plan', {
          steps: [
            { title: 'Look at the directory', commands: [{ host: 'local', command: `ls ${dir}` }] },
            { title: 'Touch the marker', commands: [{ host: 'local', command: `touch ${file}` }] },
            { title: 'Write back: update_entity_attributes' },
          ],
        }),
      ],
    },
    { text: 'The plan is ready; approve it to go ahead.' },
    ...afterwards(dir, file),
  );
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: `Please touch the marker [${tag}]` });
  await transcriptHas(session.id, 'approve it to go ahead');
  await eventually('the plan to wait', async () => (await server.api('GET', `/api/sessions/${session.id}`)).status === 'planning');
  return { id: session.id, dir, file };
}

test('the plan panel lists declared commands with their classes, and Approve runs the declared change without a card (GATE-4, GATE-9)', async () => {
  // The replies of the turn the approval starts: step 1 reads, step 2 makes the change.
  const s = await waitingPlan((dir, file) => [
    { calls: [call('update_plan_step', { seq: 1, status: 'running' }), call('run', { host: 'local', command: `ls ${dir}` })] },
    {
      calls: [
        call('update_plan_step', { seq: 1, status: 'done' }),
        call('update_plan_step', { seq: 2, status: 'running' }),
        call('run', { host: 'local', command: `touch ${file}` }),
      ],
    },
    { text: 'The marker is touched.' },
  ]);
  const context = await chrome.fresh();
  const page = await context.newPage();
  try {
    // The board shows the session under "Waiting for you".
    await page.goto(`${server.base}/#token=${server.token}`);
    await page.locator(`[data-column="waiting"] [data-session-id="${s.id}"]`).waitFor();

    await page.goto(`${server.base}/sessions/${s.id}#token=${server.token}`);
    const plan = page.locator('section.plan');
    const declared = plan.locator('.declared-command');
    await eventually('two declared commands', async () => (await declared.count()) === 2);
    assert.equal(await declared.nth(0).getAttribute('data-class'), 'read_only');
    assert.equal(await declared.nth(1).getAttribute('data-class'), 'config_mutation');
    assert.equal(await declared.nth(1).getAttribute('data-host'), 'local');
    assert.match((await declared.nth(1).textContent()) ?? '', /config mutation/);
    assert.match((await declared.nth(1).textContent()) ?? '', new RegExp(`touch ${s.file}`));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'plan-decision.png'), fullPage: true });

    await plan.getByRole('button', { name: 'Approve' }).click();
    await transcriptHas(s.id, 'The marker is touched.');
    await eventually('the marker to exist', () => fs.existsSync(s.file));
    assert.deepEqual(await server.api('GET', `/api/sessions/${s.id}/approvals`), [], 'no card for a declared change');
    const session = await server.api('GET', `/api/sessions/${s.id}`);
    assert.equal(session.assent_generation, 1);
    // The plan no longer waits: its buttons are gone.
    await eventually('the buttons to go', async () => (await plan.getByRole('button', { name: 'Approve' }).count()) === 0);
    await eventually('the approval in the activity log', async () =>
      ((await page.locator('.timeline').textContent()) ?? '').includes('Operator approved plan generation 1'),
    );
  } finally {
    await context.close();
  }
});

test('Reject closes the waiting plan, nothing of it runs, and the model hears why (GATE-4)', async () => {
  const s = await waitingPlan(() => [{ text: 'Understood; what should I do instead?' }]);
  const context = await chrome.fresh();
  const page = await context.newPage();
  try {
    await page.goto(`${server.base}/sessions/${s.id}#token=${server.token}`);
    const plan = page.locator('section.plan');
    await plan.getByRole('button', { name: 'Reject' }).waitFor();
    await plan.getByLabel('reason').fill('not before the backup');
    await plan.getByRole('button', { name: 'Reject' }).click();
    await transcriptHas(s.id, 'what should I do instead?');
    await eventually('every step to show replaced', async () => {
      const statuses = await plan.locator('[data-current="true"] .step').evaluateAll((els) => els.map((el) => el.getAttribute('data-status')));
      return statuses.length === 3 && statuses.every((status) => status === 'replaced');
    });
    await eventually('the buttons to go', async () => (await plan.getByRole('button', { name: 'Approve' }).count()) === 0);
    const session = await server.api('GET', `/api/sessions/${s.id}`);
    assert.equal(session.status, 'active');
    assert.equal(session.assent_generation, null);
    assert.ok(!fs.existsSync(s.file), 'nothing of the rejected plan ran');
    await transcriptHas(s.id, 'not before the backup');
    await eventually('the rejection in the activity log', async () =>
      ((await page.locator('.timeline').textContent()) ?? '').includes('Operator rejected plan generation 1'),
    );
  } finally {
    await context.close();
  }
});
