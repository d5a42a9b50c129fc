// End-to-end test of the two-person rule (AUTHZ-3) in headless Chromium against the real
// nomos-server, configured so that a destructive command needs two distinct operators: the
// card says how many it needs and who approved so far, one approval runs nothing, the same
// operator cannot approve twice, and a second operator's approval runs it.
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
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-two-'));

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ config: '[[gate.approvers]]\nclass = "destructive"\napprovers = 2\n' });
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

/** Decides an approval with a token of its own; resolves with the response. */
async function decideAs(/** @type {string} */ token, /** @type {string} */ id) {
  return fetch(`${server.base}/api/approvals/${id}/decision`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve' }),
  });
}

test('a card under a two-person rule shows who approved so far, and only a second operator runs it (AUTHZ-3)', async () => {
  const tag = `case-${randomUUID().slice(0, 8)}`;
  const dir = fs.mkdtempSync(path.join(work, 'case-'));
  const file = path.join(dir, 'old.log');
  fs.writeFileSync(file, 'old\n');
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('set_goal', { goal: `Remove the old log (${tag})` }),
        call('propose_plan', { steps: [{ title: 'Remove the old log' }, { title: 'Write back: update_entity_attributes' }] }),
      ],
    },
    { text: 'The plan is ready. Reply "approved" to go ahead.' },
    { calls: [call('update_plan_step', { seq: 1, status: 'running' }), call('run', { host: 'local', command: `rm ${file}` })] },
    { text: 'Removing it waits for your approval.' },
    { text: 'The old log is gone.' },
  );
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: `Remove the old log [${tag}]` });
  await transcriptHas(session.id, 'The plan is ready.');
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: 'approved' });
  await transcriptHas(session.id, 'waits for your approval');
  const [approval] = await eventually('the approval to be pending', async () => {
    const pending = await server.api('GET', `/api/approvals?session_id=${session.id}`);
    return pending.length === 1 && pending;
  });
  assert.equal(approval.approvers_required, 2);

  // A second operator, made the way an administrator would.
  const bob = await server.api('POST', '/api/tokens', { name: `bob-${tag}`, role: 'operator' });
  const context = await chrome.fresh();
  const page = await context.newPage();
  try {
    await page.goto(`${server.base}/sessions/${session.id}#token=${server.token}`);
    const card = page.locator(`.activity .approval[data-approval-id="${approval.id}"]`);
    const approvers = card.locator('.approvers');
    await approvers.waitFor();
    assert.match((await approvers.textContent()) ?? '', /needs 2 approvals: none yet/);

    // The first operator approves on the card: it waits for another, and nothing ran.
    await card.getByRole('button', { name: 'Approve' }).click();
    await eventually('the card to name the first approver', async () =>
      /needs 2 approvals: \S+ approved/.test((await approvers.textContent()) ?? ''),
    );
    const first = (await approvers.getAttribute('data-approved-by')) ?? '';
    assert.notEqual(first, '');
    assert.equal(await card.getAttribute('data-approval-status'), 'pending');
    assert.ok(fs.existsSync(file), 'one approval ran nothing');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'approval-two-person.png'), fullPage: true });

    // The same operator again is refused; the second operator's approval runs it.
    assert.equal((await decideAs(server.token, approval.id)).status, 403);
    assert.ok(fs.existsSync(file), 'a repeated approval ran nothing');
    assert.equal((await decideAs(bob.token, approval.id)).status, 200);
    await eventually('the log to be removed', () => !fs.existsSync(file));
    await transcriptHas(session.id, 'The old log is gone.');
    const decided = await server.api('GET', `/api/sessions/${session.id}/approvals`);
    assert.deepEqual(
      decided.map((/** @type {any} */ a) => [a.status, [...a.approved_by].sort()]),
      [['approved', [first, `bob-${tag}`].sort()]],
    );
  } finally {
    await context.close();
  }
});
