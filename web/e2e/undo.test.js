// End-to-end test of the ways back (SAFE-2, SAFE-1's buttons) in headless Chromium against the
// real nomos-server with the scripted model stub: a `sed -i` the plan declared on `local` is
// backed up before it runs, the session page lists the backup under "Ways back" with a
// Restore button, the button files a destructive request shown as a card, and approving the
// card puts the file back.
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
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-undo-'));

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ config: `[agent]\nbackup_root = "${path.join(work, 'backup')}"\n` });
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

// rule: SAFE-2
test('a backup is listed under Ways back, Restore files a card, and approving it puts the file back', async () => {
  const tag = `case-${randomUUID().slice(0, 8)}`;
  const file = path.join(work, 'app.conf');
  fs.writeFileSync(file, 'mode=old\n');
  const edit = `sed -i s/mode=old/mode=new/ ${file}`;
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('set_goal', { goal: `Switch the mode (${tag})` }),
        call('propose_plan', {
          steps: [{ title: 'Edit the config', commands: [{ host: 'local', command: edit }] }, { title: 'Write back: update_entity_attributes' }],
        }),
      ],
    },
    { text: 'The plan is ready; approve it to go ahead.' },
    { calls: [call('update_plan_step', { seq: 1, status: 'running' }), call('run', { host: 'local', command: edit })] },
    { text: 'The mode is new.' },
  );
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: `Please switch the mode [${tag}]` });
  await eventually('the first turn to end', async () => {
    const transcript = await server.api('GET', `/api/sessions/${session.id}/transcript`);
    return transcript.some((/** @type {any} */ m) => m.content.includes('approve it to go ahead'));
  });
  await eventually('the plan to wait', async () => (await server.api('GET', `/api/sessions/${session.id}`)).status === 'planning');
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: `yes, go ahead [${tag}]` });
  await eventually('the edit to run', () => fs.readFileSync(file, 'utf8') === 'mode=new\n');

  const context = await chrome.fresh();
  const page = await context.newPage();
  try {
    await page.goto(`${server.base}/sessions/${session.id}#token=${server.token}`);
    const undo = page.locator('details.undo');
    const restore = undo.getByRole('button', { name: 'Restore' });
    await restore.waitFor();
    assert.match((await undo.textContent()) ?? '', /SAFE-2: backup of .*app\.conf/);
    await restore.click();
    const card = page.locator('[aria-label="waiting for your approval"]');
    await eventually('the restore card', async () => ((await card.textContent()) ?? '').includes('destructive'));
    const approvals = await server.api('GET', `/api/sessions/${session.id}/approvals`);
    const pending = approvals.filter((/** @type {any} */ a) => a.status === 'pending');
    assert.equal(pending.length, 1);
    assert.equal(pending[0].class, 'destructive');
    assert.equal(fs.readFileSync(file, 'utf8'), 'mode=new\n', 'nothing is restored before the approval');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'undo-restore.png'), fullPage: true });
    await card.getByRole('button', { name: 'Approve' }).click();
    await eventually('the file to be restored', () => fs.readFileSync(file, 'utf8') === 'mode=old\n');
  } finally {
    await context.close();
  }
});
