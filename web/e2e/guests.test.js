// End-to-end test of a Proxmox node's guests on the Hosts page (FLEET-3): the real
// nomos-server runs on a machine whose PATH has a fake `pct` and `qm` (printing the
// Proxmox VE 8 outputs in fixtures/proxmox), with `local` marked `proxmox = true`; the
// server discovers the guests at start-up, and the Discover button reads them again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, launchBrowser, SCREENSHOTS, startServer } from './harness.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'proxmox');
const AUTH_KEY = 'nomos.auth';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-pve-'));

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Awaited<ReturnType<typeof launchBrowser>>} */
let chrome;

/** A `case "$2"` arm per config fixture of `kind` (`pct` or `qm`). @param {string} kind */
function configCases(kind) {
  return fs
    .readdirSync(FIXTURES)
    .filter((name) => name.startsWith(`${kind}-config-`))
    .map((name) => {
      const vmid = name.replace(`${kind}-config-`, '').replace('.txt', '');
      return `${vmid}) cat <<'PVE'\n${fs.readFileSync(path.join(FIXTURES, name), 'utf8')}PVE\n;;\n`;
    })
    .join('');
}

/** A fake `pct` or `qm`: `list`, `config ID`, and for `pct` an `exec` that runs the command here. @param {string} kind */
function fake(kind) {
  const list = fs.readFileSync(path.join(FIXTURES, `${kind}-list.txt`), 'utf8');
  const exec = kind === 'pct' ? 'exec) shift 3; exec "$@";;\n' : '';
  return `#!/bin/sh\ncase "$1" in\nlist) cat <<'PVE'\n${list}PVE\n;;\nconfig) case "$2" in\n${configCases(kind)}*) echo "no guest $2" >&2; exit 2;;\nesac;;\n${exec}*) echo "${kind}: unknown command $1" >&2; exit 255;;\nesac\n`;
}

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const bin = path.join(work, 'bin');
  fs.mkdirSync(bin);
  for (const kind of ['pct', 'qm']) fs.writeFileSync(path.join(bin, kind), fake(kind), { mode: 0o755 });
  const inventory = path.join(work, 'inventory.toml');
  fs.writeFileSync(inventory, '[[host]]\nslug = "local"\nproxmox = true\n');
  server = await startServer({ env: { PATH: `${bin}:${process.env.PATH}`, NOMOS_INVENTORY: inventory } });
  chrome = await launchBrowser();
});

after(async () => {
  await chrome?.close();
  await server?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

// rule: FLEET-3
test('a Proxmox node lists the guests found at start-up and discovers them again on demand', async (t) => {
  const context = await chrome.fresh();
  t.after(() => context.close());
  await context.addInitScript(
    ([key, token]) => localStorage.setItem(key, JSON.stringify({ accessToken: token, refreshToken: null, expiresAt: null, kind: 'static' })),
    [AUTH_KEY, server.token],
  );
  // The start-up discovery runs in the background: wait until it recorded the guests.
  await eventually('the guests found at start-up', async () => {
    const hosts = await server.api('GET', '/api/hosts');
    return hosts.filter((/** @type {any} */ h) => h.node === 'local').length === 5;
  });
  const page = await context.newPage();
  await page.goto(`${server.base}/hosts`);
  const node = page.locator('[data-host="local"]');
  await node.locator('[data-guest="lxc:nextcloud"]', { hasText: 'lxc 100 · running · 10.0.0.5 · through local' }).waitFor();
  await node.locator('[data-guest="vm:win11"]', { hasText: 'needs its own SSH address' }).waitFor();
  assert.equal(await page.locator('[data-host="lxc:nextcloud"]').count(), 0, 'a guest is listed under its node, not on top');
  await node.getByRole('button', { name: 'Discover the guests of local' }).click();
  await node.locator('[data-discovery="ok"]', { hasText: 'local: 3 containers, 2 VMs' }).waitFor();
  assert.equal(await node.locator('[data-guest]').count(), 5);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'hosts-guests.png'), fullPage: true });
});
