// The tour of demo mode, end to end in headless Chromium against the real nomos-server with no
// model configured: the board offers "Take the tour"; the tour's plan lists its declared
// commands with their classes and the sed -i's preview diff; Approve runs the declared changes;
// the deletion of the old logs waits on its own destructive card; approving it completes the
// task with its write-back. Every file it changes is under the data directory's demo/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ demo: true });
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
});

test('the tour: Take the tour, the plan with its preview, Approve, its own destructive card, done', async () => {
  const demo = path.join(server.dir, 'data', 'demo');
  const context = await chrome.fresh();
  const page = await context.newPage();
  try {
    await page.goto(`${server.base}/#token=${server.token}`);
    const tour = page.locator('section.tour');
    await tour.waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'tour-board.png'), fullPage: true });
    await tour.getByRole('button', { name: 'Take the tour' }).click();
    await page.waitForURL(/\/sessions\//);
    const id = new URL(page.url()).pathname.split('/').pop();

    // The plan waits with its declared commands, their classes, and the sed -i's diff.
    const plan = page.locator('section.plan');
    const declared = plan.locator('.declared-command');
    await eventually('three declared commands', async () => (await declared.count()) === 3);
    const classes = await declared.evaluateAll((els) => els.map((el) => el.getAttribute('data-class')));
    assert.deepEqual(classes, ['config_mutation', 'config_mutation', 'destructive']);
    await plan.locator('.preview .diff').waitFor();
    assert.equal(await plan.locator('.preview .diff .diff-del').first().textContent(), '-workers = 2');
    assert.equal(await plan.locator('.preview .diff .diff-add').first().textContent(), '+workers = 4');
    await page.locator('.messages li', { hasText: 'The plan waits for you.' }).waitFor();
    assert.match(fs.readFileSync(path.join(demo, 'app.conf'), 'utf8'), /\nworkers = 2\n/, 'nothing changed before Approve');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'tour-plan.png'), fullPage: true });

    // Approve: the declared sed and restart run, and the rm waits on its own card.
    await plan.getByRole('button', { name: 'Approve' }).click();
    const card = page.locator('.activity .approval', { hasText: 'rm ' });
    await card.waitFor({ timeout: 30_000 });
    assert.match((await card.textContent()) ?? '', /destructive/);
    assert.match(fs.readFileSync(path.join(demo, 'app.conf'), 'utf8'), /\nworkers = 4\n/);
    assert.ok(fs.existsSync(path.join(demo, 'logs', 'app.log.1')), 'not deleted before its card is approved');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'tour-card.png'), fullPage: true });

    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-session-status="done"]').waitFor({ timeout: 30_000 });
    await page.locator('.messages li', { hasText: 'That was the tour:' }).waitFor();
    assert.ok(!fs.existsSync(path.join(demo, 'logs', 'app.log.1')));
    assert.match(fs.readFileSync(path.join(demo, 'logs', 'app.log'), 'utf8'), /restarted with 4 workers/);
    const entity = await server.api('GET', '/api/entities/demo-app');
    assert.equal(entity.attributes.workers, 4);
    const session = await server.api('GET', `/api/sessions/${id}`);
    assert.equal(session.status, 'done');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'tour-done.png'), fullPage: true });
  } finally {
    await context.close();
  }
});

test('a message outside the tour still gets the read-only health check', async () => {
  const session = await server.api('POST', '/api/sessions');
  await server.api('POST', `/api/sessions/${session.id}/messages`, { text: 'how is the host doing?' });
  await eventually('the health check to finish', async () => (await server.api('GET', `/api/sessions/${session.id}`)).status === 'done');
  const executions = await server.api('GET', `/api/sessions/${session.id}/executions`);
  const commands = executions.map((/** @type {any} */ e) => e.command);
  assert.deepEqual([...commands].sort(), ['df -h', 'uptime']);
  assert.deepEqual(await server.api('GET', `/api/sessions/${session.id}/approvals`), []);
});
