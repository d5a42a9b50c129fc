// The end-to-end harness: starts the real `nomos-server` (on a free loopback port, with a temp
// data directory and the scripted model stub) and headless Chromium from Debian.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startModelStub } from './model-stub.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(os.homedir(), '.cache', 'nomos-target');

/** The server binary: `NOMOS_SERVER_BIN`, or the debug build in the shared target dir. */
export function serverBinary() {
  const bin = process.env.NOMOS_SERVER_BIN ?? path.join(TARGET, 'debug', 'nomos-server');
  if (!fs.existsSync(bin)) throw new Error(`no server binary at ${bin}; run cargo build -p nomos-server`);
  return bin;
}

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (probe.address());
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the server with the model stub; resolves once it serves. `restart` keeps its data.
 * `options.env` adds to (or replaces) the server's environment (`PATH`, `NOMOS_INVENTORY`);
 * `options.demo` configures no model, so the server runs in demo mode (the tour);
 * `options.config` is the text of the `nomos.toml` it reads from its working directory.
 * @param {{ env?: Record<string, string>, demo?: boolean, config?: string }} [options]
 */
export async function startServer(options = {}) {
  const model = await startModelStub();
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nomos-web-e2e-'));
  if (options.config !== undefined) fs.writeFileSync(path.join(dir, 'nomos.toml'), options.config);
  const base = `http://127.0.0.1:${port}`;
  let stderr = '';
  /** @type {import('node:child_process').ChildProcess | null} */
  let child = null;

  /** Spawns the binary; resolves with what it printed once it serves. */
  function spawnServer() {
    const proc = spawn(serverBinary(), ['--listen', `127.0.0.1:${port}`, '--data-dir', path.join(dir, 'data')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        RUST_LOG: 'info',
        ...(options.demo
          ? {}
          : { NOMOS_LLM_BASE_URL: model.url, NOMOS_LLM_MODEL: 'stub-e2e', NOMOS_LLM_API_KEY: 'stub-key' }),
        ...(options.env ?? {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stderr?.on('data', (d) => (stderr += d));
    let stdout = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s\n${stderr}`)), 60_000);
      proc.stdout?.on('data', (d) => {
        stdout += d;
        if (/Nomos is running/.test(stdout) && stdout.includes('\n')) {
          clearTimeout(timer);
          resolve(stdout);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code}\n${stderr}`));
      });
    });
  }

  async function kill() {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    await new Promise((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      proc.once('exit', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      proc.kill('SIGTERM');
    });
  }

  const printed = await spawnServer();
  const found = /Open (http:\/\/\S+#token=\S+)/.exec(printed);
  if (!found) throw new Error(`the first start printed no token link:\n${printed}`);
  const link = found[1];
  const token = new URL(link).hash.replace('#token=', '');
  return {
    base,
    link,
    token,
    model,
    dir,
    logs: () => stderr,
    /**
     * Calls the API with the operator token.
     * @param {string} method @param {string} route @param {object} [body]
     * @returns {Promise<any>}
     */
    async api(method, route, body) {
      const res = await fetch(base + route, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    /** Stops the server process only (streams drop), leaving the data. */
    kill,
    /** Starts it again on the same port and data. */
    async restart() {
      await kill();
      await spawnServer();
    },
    async stop() {
      await kill();
      await model.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Launches Debian's Chromium, headless, with no network chatter. Each case takes a fresh
 * context of its own (`fresh`): no cookies, storage or pages are shared between cases. */
export async function launchBrowser() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    /** A new context (a browser profile of its own). @param {{ width: number, height: number }} [viewport] */
    fresh: (viewport = { width: 1360, height: 900 }) => browser.newContext({ viewport }),
    async close() {
      await browser.close();
    },
  };
}

/** Where screenshots go. */
export const SCREENSHOTS = process.env.NOMOS_SCREENSHOTS_DIR ?? path.join(REPO, 'docs', 'screenshots');

/**
 * Waits until `check` returns a truthy value (polling), or fails with `what`.
 * @template T
 * @param {string} what @param {() => Promise<T> | T} check @param {number} [timeoutMs]
 */
export async function eventually(what, check, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
