// End-to-end tests of the operator UI in headless Chromium against the real nomos-server,
// with the scripted model stub. The cases share one server but no state: each one opens a
// browser context of its own, sets up its own session through the API, scripts the model
// replies for that session only (under a marker its messages carry) and waits for content.
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
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-files-'));
const AUTH_KEY = 'nomos.auth';

/** @param {string} name @param {object} args */
const call = (name, args) => ({ name, arguments: args });
/** @param {number} seq @param {string} status */
const step = (seq, status) => call('update_plan_step', { seq, status });

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

/**
 * Opens a case: a fresh browser context (signed in unless told not to) and a page in it.
 * On the case's end the context closes and the case fails if any page asked another host.
 * `warnings` collects the console's warnings and errors.
 * @param {import('node:test').TestContext} t
 * @param {{ signedIn?: boolean, viewport?: { width: number, height: number } }} [options]
 */
async function openCase(t, options = {}) {
  const context = await chrome.fresh(options.viewport);
  /** @type {string[]} */
  const foreign = [];
  /** @type {string[]} */
  const warnings = [];
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin !== server.base && url.protocol !== 'data:') foreign.push(request.url());
  });
  context.on('page', (page) => watch(page));
  /** @param {import('playwright-core').Page} page */
  const watch = (page) =>
    page.on('console', (message) => {
      if (message.type() === 'warning' || message.type() === 'error') warnings.push(message.text());
    });
  if (options.signedIn !== false) {
    // As a browser that signed in before: the token is in localStorage.
    await context.addInitScript(
      ([key, token]) => {
        if (!sessionStorage.getItem('nomos.e2e.seeded')) {
          sessionStorage.setItem('nomos.e2e.seeded', '1');
          localStorage.setItem(key, JSON.stringify({ accessToken: token, refreshToken: null, expiresAt: null, kind: 'static' }));
        }
      },
      [AUTH_KEY, server.token],
    );
  }
  const page = await context.newPage();
  t.after(async () => {
    await context.close();
    assert.deepEqual(foreign, [], 'the page asked another host');
  });
  return { context, page, warnings };
}

/** Whether the chat shows a message: text, or a tool call other than a plan-step update. @param {any} m */
const shownMessage = (m) => m.content.trim() !== '' || m.tool_calls.some((/** @type {any} */ c) => c.name !== 'update_plan_step');

/** A marker unique to one case, carried by its session's first message. */
const marker = () => `case-${randomUUID().slice(0, 8)}`;

/** Posts a message once the session takes one (a running turn refuses it). @param {string} id @param {string} text */
async function say(id, text) {
  await eventually(`the message "${text}" to be accepted`, async () => {
    try {
      await server.api('POST', `/api/sessions/${id}/messages`, { text });
      return true;
    } catch (error) {
      if (/\b(409|503)\b/.test(String(error))) return false;
      throw error;
    }
  });
}

/** Waits until the session's transcript holds `text`. @param {string} id @param {string} text */
async function transcriptHas(id, text) {
  await eventually(`"${text}" in the transcript`, async () => {
    const transcript = await server.api('GET', `/api/sessions/${id}/transcript`);
    return transcript.some((/** @type {any} */ m) => m.content.includes(text));
  });
}

/** The clean-up plan of a case: list the directory, remove a file, write back. */
function cleanup() {
  const dir = fs.mkdtempSync(path.join(work, 'case-'));
  const victim = path.join(dir, 'old.log');
  fs.writeFileSync(victim, 'old log line\n');
  return { dir, victim };
}

/** The replies that set the goal and propose the clean-up plan. @param {string} goal @param {{ dir: string, victim: string }} files */
function proposal(goal, files) {
  return [
    {
      text: 'I will clean up the old log file. First I set the goal and propose a plan.',
      chunks: 12,
      chunkDelayMs: 120,
      calls: [
        call('set_goal', { goal }),
        call('propose_plan', {
          steps: [
            { title: 'List the log directory', detail: `ls ${files.dir}` },
            { title: 'Remove old.log', detail: `rm -f ${files.victim}` },
            { title: 'Write back: update_entity_attributes', detail: 'record the clean-up' },
          ],
        }),
      ],
    },
    { text: 'The plan is ready: step 1 lists the directory, step 2 removes old.log. Reply "approved" to go ahead.' },
  ];
}

/** The replies after "approved": the read-only `ls` runs, the `rm` waits. @param {{ dir: string, victim: string }} files */
function execution(files) {
  return [
    { calls: [step(1, 'running'), call('run', { host: 'local', command: `ls ${files.dir}` })] },
    { calls: [step(1, 'done'), step(2, 'running'), call('run', { host: 'local', command: `rm -f ${files.victim}` })] },
    { text: 'Removing old.log is destructive; it waits for your approval in Operations.' },
  ];
}

/** The replies after the rm was approved: write back, complete, summary. */
function finish() {
  return [
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
  ];
}

/** A session with the clean-up plan proposed, through the API. */
async function sessionWithPlan(goalWords = 'Remove the old log file on local') {
  const tag = marker();
  const files = cleanup();
  const goal = `${goalWords} (${tag})`;
  const session = await server.api('POST', '/api/sessions');
  server.model.script(tag, ...proposal(goal, files));
  await say(session.id, `Please remove the old log file on local [${tag}]`);
  await transcriptHas(session.id, 'Reply "approved" to go ahead.');
  return { id: session.id, tag, goal, files };
}

/** A session whose `rm` waits for approval, through the API. @param {string} [goalWords] */
async function sessionWaiting(goalWords) {
  const s = await sessionWithPlan(goalWords);
  server.model.script(s.tag, ...execution(s.files));
  await say(s.id, 'approved');
  await transcriptHas(s.id, 'it waits for your approval in Operations');
  const [approval] = await eventually('the approval to be pending', async () => {
    const pending = await server.api('GET', `/api/approvals?session_id=${s.id}`);
    return pending.length === 1 && pending;
  });
  return { ...s, approval };
}

/** A finished session (the rm approved, the task complete), through the API. */
async function sessionDone() {
  const s = await sessionWaiting();
  server.model.script(s.tag, ...finish());
  await server.api('POST', `/api/approvals/${s.approval.id}/decision`, { decision: 'approve' });
  await transcriptHas(s.id, 'Done: old.log is gone.');
  await eventually('the session to be done', async () => (await server.api('GET', `/api/sessions/${s.id}`)).status === 'done');
  return s;
}

/** Records, inside the page, every time the chat shows a reply above the operator's message. */
async function watchOrder(/** @type {import('playwright-core').Page} */ page, /** @type {string} */ mine, /** @type {string} */ reply) {
  await page.evaluate(
    ([mineText, replyText]) => {
      const w = /** @type {any} */ (window);
      w.__orderViolations = 0;
      const check = () => {
        const items = [...document.querySelectorAll('.messages li')].map((li) => li.textContent ?? '');
        const replyAt = items.findIndex((text) => text.includes(replyText));
        const mineAt = items.findIndex((text) => text.includes(mineText));
        if (replyAt !== -1 && (mineAt === -1 || mineAt > replyAt)) w.__orderViolations += 1;
      };
      new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
    },
    [mine, reply],
  );
  return () => page.evaluate(() => /** @type {any} */ (window).__orderViolations);
}

test('a bad token is refused with a message and the login stays', async (t) => {
  const { page } = await openCase(t, { signedIn: false });
  await page.goto(server.base + '/');
  await page.getByRole('heading', { name: 'Sign in to Nomos' }).waitFor();
  // Nothing was refused yet: no error on a first visit.
  assert.equal(await page.getByRole('alert').count(), 0);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'login.png') });
  await page.getByLabel('Operator token').fill('not-the-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('The server did not accept your token').waitFor();
  assert.equal(await page.evaluate((key) => localStorage.getItem(key), AUTH_KEY), null);
});

test('the printed token link signs in for the browser, a new tab is signed in and sign-out clears it', async (t) => {
  const { context, page } = await openCase(t, { signedIn: false });
  await page.goto(server.link);
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
  assert.ok(!page.url().includes('token'), `token still in ${page.url()}`);
  const stored = await page.evaluate((key) => localStorage.getItem(key), AUTH_KEY);
  assert.equal(JSON.parse(stored ?? '{}').accessToken, server.token);
  // A new tab (a shared link) is signed in without the token.
  const other = await context.newPage();
  await other.goto(server.base + '/operations');
  await other.getByRole('heading', { name: 'Operations' }).waitFor();
  await other.close();
  // Signed in across a reload; signing out forgets the token.
  await page.reload();
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Nomos' }).waitFor();
  assert.equal(await page.evaluate((key) => localStorage.getItem(key), AUTH_KEY), null);
});

test('the admin page creates an agent token, shown once, that works at once and stops when revoked (AUTHZ-1)', async (t) => {
  const { page } = await openCase(t);
  await page.goto(server.base + '/');
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.getByRole('heading', { name: 'Admin' }).waitFor();
  const name = `agent-${randomUUID().slice(0, 8)}`;
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Role').selectOption('agent');
  await page.getByRole('button', { name: 'Create' }).click();
  const shown = page.locator(`[data-created-token="${name}"] code`);
  await shown.waitFor();
  const token = (await shown.textContent())?.trim() ?? '';
  assert.equal(token.length, 64);
  await page.locator(`tr[data-token="${name}"][data-role="agent"]`).waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'admin.png') });
  /** @param {string} path */
  const as = (path) => fetch(server.base + path, { headers: { authorization: `Bearer ${token}` } });
  assert.equal((await as('/api/sessions')).status, 200, 'the new agent token works at once');
  assert.equal((await as('/api/tokens')).status, 403, 'an agent may not list tokens');
  await page.locator(`tr[data-token="${name}"]`).getByRole('button', { name: 'Revoke' }).click();
  await eventually('the revoked token to leave the list', async () => (await page.locator(`tr[data-token="${name}"]`).count()) === 0);
  assert.equal((await as('/api/sessions')).status, 401, 'a revoked token stops at once');
});

test('a whole task in one turn: the plan streams in, every step is placed, no resynchronisation', async (t) => {
  const { page, warnings } = await openCase(t);
  const tag = marker();
  const files = cleanup();
  const goal = `Check the log directory on local (${tag})`;
  // As the demo does: the plan is proposed and its steps run in the same turn.
  server.model.script(
    tag,
    {
      text: 'I will look at the log directory. First I set the goal and propose a plan.',
      chunks: 10,
      chunkDelayMs: 80,
      calls: [
        call('set_goal', { goal }),
        call('propose_plan', { steps: [{ title: 'List the directory', detail: `ls ${files.dir}` }, { title: 'Count the files' }, { title: 'Report' }] }),
      ],
    },
    { calls: [step(1, 'running'), call('run', { host: 'local', command: `ls ${files.dir}` })] },
    { calls: [step(1, 'done'), step(2, 'running'), call('run', { host: 'local', command: `ls -1 ${files.dir}` })] },
    { calls: [step(2, 'done'), step(3, 'running'), step(3, 'done')] },
    { text: 'The directory holds one file, old.log. Nothing else to do.', chunks: 8, chunkDelayMs: 60 },
  );
  const session = await server.api('POST', '/api/sessions');
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.locator('[data-stream-state="live"]').waitFor();
  const mine = `What is in the log directory? [${tag}]`;
  const violations = await watchOrder(page, mine, 'Nothing else to do.');
  await page.getByLabel('Message').fill(mine);
  await page.getByRole('button', { name: 'Send' }).click();
  // The model's text appears while it streams, before the message is stored.
  await page.locator('[data-streaming="true"]').waitFor({ timeout: 10_000 });
  await page.locator('.messages li', { hasText: 'Nothing else to do.' }).waitFor();
  await page.getByRole('heading', { name: goal }).waitFor();
  const steps = page.locator('.plan [data-current="true"] > li');
  // The page shows what the server holds (it appends a write-back step to a plan without one).
  await eventually('the three steps done, as the server has them', async () => {
    const shown = JSON.stringify(await steps.evaluateAll((items) => items.map((li) => li.getAttribute('data-status'))));
    const held = JSON.stringify((await server.api('GET', `/api/sessions/${session.id}/plan`)).steps.map((/** @type {any} */ s) => s.status));
    if (!shown.startsWith('["done","done","done"') || shown !== held) throw new Error(`shown ${shown}, server ${held}`);
    return true;
  });
  assert.match((await steps.nth(0).textContent()) ?? '', /List the directory/);
  // Every step event found its step: no resynchronisation, no warning.
  assert.equal(await page.getByText('Resynchronised').count(), 0);
  assert.deepEqual(warnings.filter((w) => /unknown step/.test(w)), []);
  // The reply never stood above the operator's message.
  assert.equal(await violations(), 0, 'the reply showed above the operator message');
  // ACTIVITY-5: no approval card in the chat.
  assert.equal(await page.locator('.chat .approval').count(), 0);
});

test('an approved plan runs read-only at once and asks for the destructive command in operations (GATE-6, ACTIVITY-5)', async (t) => {
  const { page } = await openCase(t);
  const s = await sessionWithPlan();
  server.model.script(s.tag, ...execution(s.files));
  await page.goto(`${server.base}/sessions/${s.id}`);
  await page.locator('.plan [data-current="true"] > li', { hasText: 'Remove old.log' }).waitFor();
  await page.locator('[data-stream-state="live"]').waitFor();
  await page.getByLabel('Message').fill('approved');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.messages li', { hasText: 'it waits for your approval in Operations' }).waitFor();
  // The session's activity panel shows one card, for the rm only.
  const cards = page.locator('.activity .approval');
  await eventually('one approval card for the rm', async () =>
    (await cards.count()) === 1 && /^rm -f /.test((await cards.first().locator('.command').textContent()) ?? ''),
  );
  assert.equal(await page.locator('.chat .approval').count(), 0);
  // GATE-6: the read-only `ls` ran with no approval at all.
  const approvals = await server.api('GET', `/api/approvals?session_id=${s.id}`);
  assert.equal(approvals.length, 1);
  assert.match(approvals[0].command, /^rm -f /);
  // The approval names why the command is destructive and the plan step it belongs to.
  assert.ok(approvals[0].reason, 'the approval carries its reason');
  assert.equal(typeof approvals[0].step_seq, 'number');
  const executions = await server.api('GET', `/api/sessions/${s.id}/executions`);
  const ls = executions.find((/** @type {any} */ e) => e.command.startsWith('ls '));
  assert.equal(ls?.status, 'completed');
  assert.ok(fs.existsSync(s.files.victim), 'nothing may be removed before the approval');
});

test('approving from operations runs the command and the open session page updates live', async (t) => {
  const { context, page } = await openCase(t);
  const s = await sessionWaiting();
  server.model.script(s.tag, ...finish());
  await page.goto(`${server.base}/sessions/${s.id}`);
  await page.locator('.activity .approval', { hasText: 'rm -f' }).waitFor();
  await page.locator('[data-stream-state="live"]').waitFor();
  const ops = await context.newPage();
  await ops.goto(`${server.base}/operations`);
  const card = ops.locator('.pending .approval', { hasText: s.files.victim });
  // The card is complete once its plan step loaded: wait for the content, not the element.
  await eventually('the card with its command, host, class, reason, step and expiry', async () => {
    const text = (await card.textContent()) ?? '';
    const goal = (await ops.locator('.approval-wrap', { hasText: s.files.victim }).locator('[data-goal]').textContent({ timeout: 500 }).catch(() => '')) ?? '';
    const lacking = [`rm -f ${s.files.victim}`, 'local', 'destructive', 'Reason', 'Remove old.log', 'Expires']
      .filter((p) => !text.includes(p))
      .concat(goal.includes(s.goal) ? [] : [`the goal (${goal})`]);
    if (lacking.length > 0) throw new Error(`the card lacks ${lacking.join(', ')}: ${text}`);
    return true;
  });
  await ops.screenshot({ path: path.join(SCREENSHOTS, 'operations.png'), fullPage: true });
  await card.getByRole('button', { name: 'Approve' }).click();
  await eventually('the card to leave the pending list', async () => (await card.count()) === 0);
  // Recent executions are newest first: the approved rm is listed once it ran.
  const rm = ops.locator('.executions li', { hasText: `rm -f ${s.files.victim}` });
  await eventually('the rm completed in recent executions', async () => (await rm.getAttribute('data-status')) === 'completed');
  // The session page was left open: its stream brings the outcome without a reload.
  await page.locator('.messages li', { hasText: 'Done: old.log is gone.' }).waitFor({ timeout: 20_000 });
  await page.locator('[data-session-status="done"]').waitFor();
  await eventually('the rm shown done in the activity', async () => {
    const states = await page.locator('.timeline li').evaluateAll((items) =>
      items.map((li) => `${li.getAttribute('data-state')} ${li.textContent}`),
    );
    return states.some((s) => s.startsWith('done') && s.includes('rm -f'));
  });
  assert.ok(!fs.existsSync(s.files.victim), 'the approved rm ran on the host');
  // The resume note reads as one line for the operator; the note for the model stays folded.
  const note = page.locator('.messages li.role-note', { hasText: 'Resumed after your approval of' });
  await note.waitFor();
  assert.match((await note.locator('.note-line').textContent()) ?? '', /Resumed after your approval of `rm -f .*old\.log` on local \(exited 0\)\./);
  assert.equal(await page.getByText('Continue from here.').isVisible(), false, 'the note for the model shows');
  await note.getByText('Full note').click();
  await note.getByText('Continue from here.').waitFor();
  // Plan-step updates fold into the plan's rows: no chip, no activity entry of their own.
  assert.equal(await page.locator('.chat .chip', { hasText: 'update_plan_step' }).count(), 0);
  assert.equal(await page.locator('.timeline li', { hasText: 'update_plan_step' }).count(), 0);
  // After a reload the execution is still listed as completed.
  await ops.reload();
  await eventually('the rm completed after a reload', async () => (await rm.getAttribute('data-status')) === 'completed');
});

test('a finished session shows nothing running (ACTIVITY-3)', async (t) => {
  const { page } = await openCase(t);
  const s = await sessionDone();
  await page.goto(`${server.base}/sessions/${s.id}`);
  await page.locator('[data-session-status="done"]').waitFor();
  // Plan-step updates fold into the plan's rows; every other entry is shown.
  const activity = (await server.api('GET', `/api/sessions/${s.id}/activity`)).filter(
    (/** @type {any} */ e) => !(e.kind === 'tool' && e.title === 'update_plan_step'),
  );
  await eventually('the whole activity shown', async () => (await page.locator('.timeline li').count()) === activity.length);
  const states = await page.locator('.timeline li').evaluateAll((items) => items.map((li) => li.getAttribute('data-state')));
  assert.ok(states.length > 5, `activity: ${states}`);
  assert.ok(!states.includes('running') && !states.includes('stalled'), `activity: ${states}`);
  await eventually('three steps done', async () =>
    JSON.stringify(await page.locator('.plan li[data-status]').evaluateAll((items) => items.map((li) => li.getAttribute('data-status')))) ===
    '["done","done","done"]',
  );
  // Real times: every entry's time is the server's timestamp.
  const times = await page.locator('.timeline li time').evaluateAll((items) => items.map((t) => t.getAttribute('datetime')));
  assert.deepEqual([...times].reverse(), activity.map((/** @type {any} */ entry) => entry.at));
  await page.screenshot({ path: path.join(SCREENSHOTS, 'session.png'), fullPage: true });
});

test('the board sorts sessions into Done, Waiting for you and Running, and filters them', async (t) => {
  const { page } = await openCase(t);
  const done = await sessionDone();
  const waiting = await sessionWaiting('Free disk space on local');
  // A task that has only just started: no goal yet.
  const fresh = await server.api('POST', '/api/sessions');
  await page.goto(server.base + '/');
  await page.locator('[data-column="done"] li', { hasText: done.tag }).waitFor();
  await page.locator('[data-column="waiting"] li', { hasText: waiting.tag }).waitFor();
  await page.locator(`[data-column="running"] li a[href="/sessions/${fresh.id}"]`).waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'board.png'), fullPage: true });
  await page.getByLabel('Filter by goal').fill(waiting.tag);
  await eventually('the filter to hide the other tasks', async () => (await page.locator('.board li').count()) === 1);
  assert.match((await page.locator('.board li').first().textContent()) ?? '', /Free disk space on local/);
});

test('a reload mid-stream loses and duplicates nothing', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const session = await server.api('POST', '/api/sessions');
  server.model.script(tag, { text: 'Hello, I am listening.' });
  await say(session.id, `Hello [${tag}]`);
  await transcriptHas(session.id, 'I am listening.');
  const long = Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of a long answer.`).join(' ');
  server.model.script(tag, { text: long, chunks: 30, chunkDelayMs: 100 });
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.locator('.messages li', { hasText: 'I am listening.' }).waitFor();
  await page.locator('[data-stream-state="live"]').waitFor();
  await page.getByLabel('Message').fill('Tell me what you did, at length');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-streaming="true"]').waitFor();
  await page.reload();
  await page.locator('.messages li[data-message-id]', { hasText: 'Line 30 of a long answer.' }).waitFor({ timeout: 20_000 });
  await eventually('the page to match the server', async () => {
    const transcript = await server.api('GET', `/api/sessions/${session.id}/transcript`);
    const shown = await page.locator('.messages li[data-message-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-message-id')));
    const expected = transcript.filter(shownMessage).map((/** @type {any} */ m) => m.id);
    return JSON.stringify(shown) === JSON.stringify(expected);
  });
  await eventually('the streamed draft to give way to the stored message', async () => (await page.locator('[data-streaming="true"]').count()) === 0);
  const ids = await page.locator('.messages li[data-message-id]').evaluateAll((items) => items.map((li) => li.getAttribute('data-message-id')));
  assert.equal(new Set(ids).size, ids.length, 'a message is shown twice');
  assert.equal(await page.locator('.messages li', { hasText: 'Line 30 of a long answer.' }).count(), 1);
  const keys = await page.locator('.timeline li').evaluateAll((items) => items.map((li) => li.getAttribute('data-key')));
  assert.equal(new Set(keys).size, keys.length, 'an activity entry is shown twice');
});

test('a dropped stream shows reconnecting, then resumes without gaps or duplicates', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const session = await server.api('POST', '/api/sessions');
  server.model.script(tag, { text: 'Ready when you are.' });
  await say(session.id, `Are you there? [${tag}]`);
  await transcriptHas(session.id, 'Ready when you are.');
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.locator('.messages li', { hasText: 'Ready when you are.' }).waitFor();
  await page.locator('[data-stream-state="live"]').waitFor();
  await server.kill();
  await page.locator('[data-stream-state="reconnecting"]').waitFor({ timeout: 15_000 });
  await server.restart();
  await page.locator('[data-stream-state="live"]').waitFor({ timeout: 30_000 });
  server.model.script(tag, { text: 'Still here after the restart.' });
  await page.getByLabel('Message').fill('Are you still there?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.messages li', { hasText: 'Still here after the restart.' }).waitFor();
  assert.equal(await page.locator('.messages li', { hasText: 'Still here after the restart.' }).count(), 1);
  assert.equal(await page.locator('[data-gaps]').count(), 0, 'the resumed stream had a gap');
});

test('a model error shows inline with Retry and never resumes by itself (TURN-1)', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const session = await server.api('POST', '/api/sessions');
  server.model.script(tag, { text: 'Which disks?' });
  await say(session.id, `Hello [${tag}]`);
  await transcriptHas(session.id, 'Which disks?');
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.locator('.messages li', { hasText: 'Which disks?' }).waitFor();
  await page.locator('[data-stream-state="live"]').waitFor();
  // Not a context overflow: that one is compacted and retried once (TURN-9).
  server.model.script(tag, { status: 400, body: JSON.stringify({ error: { message: 'unknown model: nope-7b' } }) });
  // From the keyboard: Enter sends.
  await page.getByLabel('Message').fill('Check the disks');
  await page.getByLabel('Message').press('Enter');
  const error = page.locator('[data-turn-error]');
  await error.waitFor();
  assert.match((await error.textContent()) ?? '', /400|unknown model/);
  const asked = server.model.asked(tag);
  // Nothing resumes by itself: after a pause the model has not been asked again.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(server.model.asked(tag), asked);
  server.model.script(tag, { text: 'Retried: the disks are fine.' });
  await error.getByRole('button', { name: 'Retry' }).click();
  await page.locator('.messages li', { hasText: 'Retried: the disks are fine.' }).waitFor();
  await eventually('the error to clear', async () => (await page.locator('[data-turn-error]').count()) === 0);
});

test('the phone width shows the session stacked and usable', async (t) => {
  const { page } = await openCase(t, { viewport: { width: 390, height: 844 } });
  const s = await sessionWaiting();
  await page.goto(`${server.base}/sessions/${s.id}`);
  await page.locator('.activity .approval', { hasText: 'rm -f' }).waitFor();
  await page.getByLabel('Message').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
  // On a phone the decision buttons sit at the top of the card, above the command.
  const card = page.locator('.activity .approval').first();
  const approve = await card.getByRole('button', { name: 'Approve' }).boundingBox();
  const command = await card.locator('.command').boundingBox();
  assert.ok(approve && command && approve.y + approve.height <= command.y, `Approve at ${approve?.y}, command at ${command?.y}`);
});

test('every control on every page has an accessible name', async (t) => {
  const { page } = await openCase(t);
  const s = await sessionWaiting();
  /** @type {[string, string][]} each route with the content it shows once loaded */
  const routes = [
    ['/', `a[href="/sessions/${s.id}"]`],
    [`/sessions/${s.id}`, '.activity .approval'],
    ['/operations', '.pending .approval'],
    ['/new', '#new-task-text'],
    ['/history', `.history-row[data-session-id="${s.id}"]`],
    ['/hosts', '[data-host]'],
    ['/knowledge', '.entities[data-loaded="true"]'],
  ];
  for (const [route, ready] of routes) {
    await page.goto(server.base + route);
    await page.locator(ready).first().waitFor();
    await page.locator('a.attention[data-waiting]').waitFor();
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

test('every execution row opens its output: exit, duration, bytes cut, ANSI rendered, a copy button', async (t) => {
  const { context, page } = await openCase(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  const tag = marker();
  const colour = "printf '\\033[1;31mFAILED\\033[0m one check\\n'";
  const long = 'seq 1 400000';
  server.model.script(
    tag,
    { calls: [call('run', { host: 'local', command: colour })] },
    { calls: [call('run', { host: 'local', command: long })] },
    { text: 'Both commands ran.' },
  );
  const session = await server.api('POST', '/api/sessions');
  await say(session.id, `Show me a coloured line and a long list [${tag}]`);
  await transcriptHas(session.id, 'Both commands ran.');
  const executions = await server.api('GET', `/api/sessions/${session.id}/executions`);
  const printed = executions.find((/** @type {any} */ e) => e.command === colour);
  const listed = executions.find((/** @type {any} */ e) => e.command === long);
  assert.equal(printed?.status, 'completed', JSON.stringify(executions));
  assert.ok(listed?.output?.stdout_cut > 0, 'the long list was cut');
  // In the session's activity.
  await page.goto(`${server.base}/sessions/${session.id}`);
  const row = page.locator('.timeline li', { has: page.locator(`[data-execution-output="${printed.id}"]`) });
  await row.locator('summary').click();
  const out = row.locator('pre[aria-label="standard output"]');
  await eventually('the coloured output, rendered', async () => ((await out.textContent()) ?? '').includes('FAILED one check'));
  assert.equal(await out.locator('.ansi-red.ansi-bold', { hasText: 'FAILED' }).count(), 1);
  assert.ok(!((await out.textContent()) ?? '').includes('['), 'a raw escape code shows');
  assert.match((await row.locator('[data-exit]').textContent()) ?? '', /exit 0/);
  await row.getByRole('button', { name: 'Copy standard output' }).click();
  await row.getByRole('button', { name: 'Copy standard output' }).filter({ hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'FAILED one check\n');
  // In operations, the cut is told.
  await page.goto(`${server.base}/operations`);
  const item = page.locator(`.executions li[data-execution-id="${listed.id}"]`);
  await item.locator('summary').first().click();
  await eventually('the bytes cut shown', async () => /cut/.test((await item.locator('[data-cut]').textContent()) ?? ''));
  assert.match((await item.locator('pre[aria-label="standard output"]').textContent()) ?? '', /^1\n2\n3\n/);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'output.png'), fullPage: true });
});

test('New task creates no session until its first message, which opens the session', async (t) => {
  const { page } = await openCase(t);
  const before = (await server.api('GET', '/api/sessions?limit=1000')).length;
  await page.goto(server.base + '/');
  await page.getByRole('button', { name: 'New task' }).click();
  await page.waitForURL(/\/new$/);
  await page.getByRole('heading', { name: 'New task' }).waitFor();
  assert.equal((await server.api('GET', '/api/sessions?limit=1000')).length, before, 'a click created a session');
  const tag = marker();
  server.model.script(tag, { text: 'On it: which host do you mean?' });
  await page.getByLabel('Message').fill(`Tidy the temp directory [${tag}]`);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/\/sessions\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop() ?? '';
  await page.locator('.messages li.role-operator', { hasText: 'Tidy the temp directory' }).waitFor();
  await page.locator('.messages li', { hasText: 'which host do you mean?' }).waitFor();
  // No goal was set: the first message titles the session.
  assert.equal((await server.api('GET', `/api/sessions/${id}`)).title, `Tidy the temp directory [${tag}]`);
  await page.getByRole('heading', { name: `Tidy the temp directory [${tag}]` }).waitFor();
  const transcript = await server.api('GET', `/api/sessions/${id}/transcript`);
  assert.equal(transcript.filter((/** @type {any} */ m) => m.role === 'operator').length, 1);
  // Back leaves the session for the board, not for an empty new-task page.
  await page.goBack();
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
  await page.locator(`[data-session-id="${id}"] .goal`, { hasText: 'Tidy the temp directory' }).waitFor();
});

test('History lists sessions newest first in pages, filtered by status and text kept in the URL', async (t) => {
  const { page } = await openCase(t);
  // 27 sessions of this case (one page is 25), created through the API, newest last.
  const tag = marker();
  const made = [];
  for (let i = 0; i < 27; i++) {
    const session = await server.api('POST', '/api/sessions');
    // `<tag>-<i>]`: the closing bracket keeps item 1's marker out of item 10's messages.
    server.model.script(`${tag}-${i}]`, { calls: [call('set_goal', { goal: `History item ${i} (${tag})` })] }, { text: `Goal ${i} set.` });
    await say(session.id, `Set goal ${i} [${tag}-${i}]`);
    made.push(session.id);
  }
  for (const [i, id] of made.entries()) await transcriptHas(id, `Goal ${i} set.`);
  await page.goto(`${server.base}/history?q=${tag}`);
  await page.getByRole('heading', { name: 'History', exact: true }).waitFor();
  const rows = page.locator('.history-row');
  await eventually('a full first page', async () => (await rows.count()) === 25);
  // Newest first: the last created heads the list.
  assert.match((await rows.first().textContent()) ?? '', /History item 26 /);
  await page.getByRole('button', { name: 'More' }).click();
  await eventually('the second page appended', async () => (await rows.count()) === 27);
  const shown = await rows.evaluateAll((items) => items.map((li) => li.getAttribute('data-session-id')));
  assert.deepEqual(shown, [...made].reverse(), 'paging skipped or repeated a session');
  assert.equal(await page.getByRole('button', { name: 'More' }).count(), 0);
  // Text narrows the list and goes into the URL; a reload keeps it.
  await page.getByLabel('Search goals and summaries').fill(`item 13 (${tag}`);
  await eventually('one session matches', async () => (await rows.count()) === 1 && /History item 13 /.test((await rows.first().textContent()) ?? ''));
  assert.match(decodeURIComponent(page.url()), /q=item\+13|q=item 13/);
  await page.getByLabel('Status').selectOption('done');
  await eventually('no done session matches', async () => (await rows.count()) === 0 && page.url().includes('status=done'));
  await page.reload();
  assert.equal(await page.getByLabel('Status').inputValue(), 'done');
  await page.getByLabel('Status').selectOption('');
  await eventually('the match again', async () => (await rows.count()) === 1);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'history.png'), fullPage: true });
});

test('Knowledge shows entities with attributes and relations, and searches entries', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const host = `web-${tag}`;
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('update_entity_attributes', { slug: host, kind: 'host', attributes: { os: 'debian 13', disks: ['sda', 'sdb'] } }),
        call('update_entity_attributes', { slug: `nginx-${tag}`, kind: 'service', attributes: { port: 443 } }),
        call('create_relationship', { from: `nginx-${tag}`, kind: 'runs_on', to: host }),
        call('upsert_knowledge', { key: `backup-${tag}`, title: `Backups of ${host}`, content: 'Nightly at 02:00 to the NAS.', tags: ['backup'], about: [host] }),
      ],
    },
    { text: 'Recorded what I found.' },
  );
  await say(session.id, `Write down what you know [${tag}]`);
  await transcriptHas(session.id, 'Recorded what I found.');
  await page.goto(`${server.base}/knowledge`);
  await page.getByRole('heading', { name: 'Knowledge', exact: true }).waitFor();
  await page.getByLabel('Filter entities').fill(tag);
  const item = page.locator(`[data-entity="${host}"] button`);
  await item.click();
  await page.getByRole('heading', { name: host }).waitFor();
  const attributes = page.locator('.attributes');
  await eventually('the attributes', async () => /debian 13/.test((await attributes.textContent()) ?? '') && /\["sda","sdb"\]/.test((await attributes.textContent()) ?? ''));
  await page.locator('.relations li', { hasText: 'runs on' }).waitFor();
  assert.match((await page.locator('.relations li').first().textContent()) ?? '', new RegExp(`nginx-${tag} runs on ${host}`));
  await page.getByLabel('Search entries').fill('nightly NAS');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator(`[data-entry="backup-${tag}"]`, { hasText: 'Nightly at 02:00' }).waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'knowledge.png'), fullPage: true });
});

test('Hosts lists the inventory with tags, last audit and host key, and checks reachability on demand', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('update_entity_attributes', { slug: 'local', kind: 'host', attributes: { host_key: `SHA256:${tag}`, os: 'debian' } }),
        call('upsert_knowledge', { key: `audit-${tag}`, title: 'Audit of local', content: 'All fine.', tags: ['audit'], about: ['local'] }),
      ],
    },
    { text: 'Audited local.' },
  );
  await say(session.id, `Audit this machine [${tag}]`);
  await transcriptHas(session.id, 'Audited local.');
  await page.goto(`${server.base}/hosts`);
  await page.getByRole('heading', { name: 'Hosts', exact: true }).waitFor();
  const host = page.locator('[data-host="local"]');
  await eventually('the recorded host key', async () => ((await host.locator('[data-host-key]').textContent()) ?? '').includes(`SHA256:${tag}`));
  assert.notEqual(((await host.locator('[data-audited]').textContent()) ?? '').trim(), 'never');
  await host.getByRole('button', { name: 'Check whether local is reachable' }).click();
  await host.locator('[data-reachable="true"]', { hasText: 'reachable (this machine' }).waitFor();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'hosts.png'), fullPage: true });
});

test('a session can be deleted from its page, after a confirmation', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const session = await server.api('POST', '/api/sessions');
  server.model.script(tag, { text: 'Noted.' });
  await say(session.id, `Nothing to do [${tag}]`);
  await transcriptHas(session.id, 'Noted.');
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.locator('.messages li', { hasText: 'Noted.' }).waitFor();
  await page.getByRole('button', { name: 'Delete session' }).click();
  await page.getByRole('button', { name: 'Keep it' }).click();
  assert.equal((await server.api('GET', `/api/sessions/${session.id}`)).id, session.id);
  await page.getByRole('button', { name: 'Delete session' }).click();
  await page.getByRole('button', { name: 'Delete for good' }).click();
  await page.getByRole('heading', { name: 'Task board' }).waitFor();
  await assert.rejects(server.api('GET', `/api/sessions/${session.id}`), /404/);
});

/** What the badge should count: pending approvals plus plans waiting for assent. */
async function expectedWaiting() {
  const approvals = await server.api('GET', '/api/approvals');
  const planning = await server.api('GET', '/api/sessions?status=planning&limit=1000');
  return approvals.length + planning.filter((/** @type {any} */ s) => s.plan_generation > 0 && s.assent_generation !== s.plan_generation).length;
}

test('the navigation badge counts what waits for the operator', async (t) => {
  const { page } = await openCase(t);
  await page.goto(server.base + '/');
  const badge = page.locator('a.attention');
  // The count, once loaded (the attribute is absent before).
  const start = Number(await eventually('the badge count', async () => badge.getAttribute('data-waiting')));
  assert.equal(start, await expectedWaiting());
  // A plan waiting for assent counts one; its destructive command, once asked, another.
  const s = await sessionWithPlan();
  await eventually('the plan counted', async () => Number(await badge.getAttribute('data-waiting')) === start + 1);
  server.model.script(s.tag, ...execution(s.files));
  await say(s.id, 'approved');
  await eventually('the approval counted, the plan no longer', async () => {
    const pending = await server.api('GET', `/api/approvals?session_id=${s.id}`);
    return pending.length === 1 && Number(await badge.getAttribute('data-waiting')) === start + 1;
  });
  await server.api('POST', `/api/approvals/${(await server.api('GET', `/api/approvals?session_id=${s.id}`))[0].id}/decision`, { decision: 'deny' });
  await eventually('nothing of this case counted', async () => Number(await badge.getAttribute('data-waiting')) === start);
});

test('every page fits a phone (390 px) and a desktop, and is shot at both widths', async (t) => {
  const s = await sessionWaiting();
  const done = await sessionDone();
  const pages = [
    { name: 'board', route: '/', ready: `a[href="/sessions/${s.id}"]` },
    { name: 'new-task', route: '/new', ready: '#new-task-text' },
    { name: 'session', route: `/sessions/${done.id}`, ready: '.timeline li' },
    { name: 'session-waiting', route: `/sessions/${s.id}`, ready: '.activity .approval' },
    { name: 'operations', route: '/operations', ready: '.pending .approval' },
    { name: 'history', route: '/history', ready: '.history-row' },
    { name: 'knowledge', route: '/knowledge', ready: '[data-entity]' },
    { name: 'hosts', route: '/hosts', ready: '[data-host]' },
  ];
  for (const [suffix, viewport] of /** @type {const} */ ([['', { width: 1360, height: 900 }], ['-phone', { width: 390, height: 844 }]])) {
    const { page } = await openCase(t, { viewport });
    for (const { name, route, ready } of pages) {
      await page.goto(server.base + route);
      await page.locator(ready).first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${route} scrolls sideways by ${overflow}px at ${viewport.width}px`);
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}${suffix}.png`), fullPage: true });
    }
  }
  // The output of a finished session's command, open.
  const { page } = await openCase(t);
  await page.goto(`${server.base}/sessions/${done.id}`);
  const row = page.locator('.timeline li', { has: page.locator('[data-execution-output]') }).first();
  await row.locator('summary').click();
  await row.locator('.exec-output [data-exit]').waitFor();
  await row.screenshot({ path: path.join(SCREENSHOTS, 'output-row.png') });
});

test('an approval card shows its preview: the unified diff a sed -i would make (GATE-10)', async (t) => {
  const { page } = await openCase(t);
  const tag = marker();
  const dir = fs.mkdtempSync(path.join(work, 'case-'));
  const conf = path.join(dir, 'app.conf');
  fs.writeFileSync(conf, 'server {\n    listen 80;\n}\n');
  const session = await server.api('POST', '/api/sessions');
  server.model.script(
    tag,
    {
      calls: [
        call('set_goal', { goal: `The app listens on 8080 (${tag})` }),
        call('propose_plan', { steps: [{ title: 'Move the app to 8080' }, { title: 'Write back: update_entity_attributes' }] }),
      ],
    },
    { text: 'The plan is ready. Reply "approved" to go ahead.' },
  );
  await say(session.id, `Move the app to port 8080 [${tag}]`);
  await transcriptHas(session.id, 'The plan is ready.');
  server.model.script(
    tag,
    { calls: [step(1, 'running'), call('run', { host: 'local', command: `sed -i 's/listen 80;/listen 8080;/' ${conf}` })] },
    { text: 'The edit was not declared; it waits for your approval.' },
  );
  await say(session.id, 'approved');
  await transcriptHas(session.id, 'it waits for your approval');
  // The request carries the preview: the sed without -i, diffed against the file.
  const [approval] = await eventually('the approval to be pending', async () => {
    const pending = await server.api('GET', `/api/approvals?session_id=${session.id}`);
    return pending.length === 1 && pending;
  });
  assert.equal(approval.preview?.parser, 'sed_diff');
  assert.match(approval.preview?.diff ?? '', /-    listen 80;\n\+    listen 8080;/);
  await page.goto(`${server.base}/sessions/${session.id}`);
  const card = page.locator('.activity .approval');
  await card.locator('.preview .diff').waitFor();
  assert.match((await card.locator('.preview h4').textContent()) ?? '', new RegExp(`Changes to ${conf}`));
  assert.equal(await card.locator('.preview .diff .diff-add').textContent(), '+    listen 8080;');
  assert.equal(await card.locator('.preview .diff .diff-del').textContent(), '-    listen 80;');
  // The preview did not edit the file; only an approval would.
  assert.equal(fs.readFileSync(conf, 'utf8'), 'server {\n    listen 80;\n}\n');
  await page.screenshot({ path: path.join(SCREENSHOTS, 'approval-preview.png'), fullPage: true });
});
