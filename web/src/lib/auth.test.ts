// @vitest-environment node
// Unit tests of the login session and OIDC refresh, against a token endpoint served over real
// HTTP on loopback.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthSession, REFRESH_MARGIN_MS, STORAGE_KEY, tokenFromFragment } from './auth';
import { authorizeUrl, codeChallenge, codeVerifier, exchangeCode, OidcError, refreshTokens, tokenSetFrom } from './oidc';
import type { OidcClientInfo } from './types';

/** An in-memory Storage (sessionStorage's interface). */
function memoryStorage() {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
    items,
  };
}

/** A token endpoint: answers each grant from a script and records the forms it got. */
let endpoint: http.Server;
let client: OidcClientInfo;
const forms: URLSearchParams[] = [];
let answer: { status: number; body: unknown } = { status: 200, body: {} };

beforeAll(async () => {
  endpoint = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      forms.push(new URLSearchParams(body));
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const { port } = endpoint.address() as AddressInfo;
  client = {
    authorization_endpoint: `http://127.0.0.1:${port}/authorize`,
    token_endpoint: `http://127.0.0.1:${port}/token`,
    client_id: 'nomos-ui',
  };
});

afterAll(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));

describe('tokenFromFragment', () => {
  it('takes the token out of the fragment and keeps the rest', () => {
    expect(tokenFromFragment('#token=abc123')).toEqual({ token: 'abc123', rest: '' });
    expect(tokenFromFragment('#token=abc&view=ops')).toEqual({ token: 'abc', rest: '#view=ops' });
    expect(tokenFromFragment('#other=1')).toEqual({ token: null, rest: '#other=1' });
    expect(tokenFromFragment('')).toEqual({ token: null, rest: '' });
  });
});

describe('AuthSession', () => {
  it('keeps a static token in session storage, without expiry', () => {
    const storage = memoryStorage();
    const auth = new AuthSession(storage, () => 0);
    auth.signIn({ accessToken: 'static', refreshToken: null, expiresAt: null, kind: 'static' });
    expect(auth.token()).toBe('static');
    expect(auth.refreshDelay()).toBeNull();
    // A new page in the same tab finds it.
    expect(new AuthSession(storage, () => 0).token()).toBe('static');
  });

  it('never hands out a token within 30 s of its expiry', () => {
    let now = 1_000_000;
    const auth = new AuthSession(memoryStorage(), () => now);
    auth.signIn({ accessToken: 'jwt', refreshToken: 'r1', expiresAt: now + 60_000, kind: 'oidc' });
    expect(auth.token()).toBe('jwt');
    expect(auth.refreshDelay()).toBe(60_000 - REFRESH_MARGIN_MS);
    now += 60_000 - REFRESH_MARGIN_MS;
    expect(auth.token()).toBeNull();
    auth.signOut();
  });

  it('refreshes an expiring token at the token endpoint before using it', async () => {
    let now = 5_000_000;
    const auth = new AuthSession(memoryStorage(), () => now);
    auth.refresher = (refresh) => refreshTokens(client, refresh, () => now);
    auth.signIn({ accessToken: 'old', refreshToken: 'r1', expiresAt: now + 10_000, kind: 'oidc' });
    const seen: string[] = [];
    auth.subscribe((reason) => seen.push(reason));
    answer = { status: 200, body: { access_token: 'new', expires_in: 300, refresh_token: 'r2' } };
    forms.length = 0;
    expect(await auth.ensureToken()).toBe('new');
    expect(forms).toHaveLength(1);
    expect(forms[0].get('grant_type')).toBe('refresh_token');
    expect(forms[0].get('refresh_token')).toBe('r1');
    expect(forms[0].get('client_id')).toBe('nomos-ui');
    expect(auth.expiresAt).toBe(now + 300_000);
    expect(seen).toEqual(['refreshed']);
    auth.signOut();
  });

  it('makes one refresh request for many callers at once', async () => {
    const now = 7_000_000;
    const auth = new AuthSession(memoryStorage(), () => now);
    auth.refresher = (refresh) => refreshTokens(client, refresh, () => now);
    auth.signIn({ accessToken: 'old', refreshToken: 'r1', expiresAt: now, kind: 'oidc' });
    answer = { status: 200, body: { access_token: 'fresh', expires_in: 300 } };
    forms.length = 0;
    const tokens = await Promise.all([auth.ensureToken(), auth.ensureToken(), auth.ensureToken()]);
    expect(tokens).toEqual(['fresh', 'fresh', 'fresh']);
    expect(forms).toHaveLength(1);
    auth.signOut();
  });

  it('signs out and says expired when the refresh is refused', async () => {
    const now = 9_000_000;
    const storage = memoryStorage();
    const auth = new AuthSession(storage, () => now);
    auth.refresher = (refresh) => refreshTokens(client, refresh, () => now);
    auth.signIn({ accessToken: 'old', refreshToken: 'revoked', expiresAt: now, kind: 'oidc' });
    const seen: string[] = [];
    auth.subscribe((reason) => seen.push(reason));
    answer = { status: 400, body: { error: 'invalid_grant', error_description: 'refresh token revoked' } };
    expect(await auth.ensureToken()).toBeNull();
    expect(auth.signedIn).toBe(false);
    expect(storage.items.has(STORAGE_KEY)).toBe(false);
    expect(seen).toEqual(['expired']);
  });

  it('clears the session on a 401 so the login shows again', () => {
    const storage = memoryStorage();
    const auth = new AuthSession(storage, () => 0);
    auth.signIn({ accessToken: 'static', refreshToken: null, expiresAt: null, kind: 'static' });
    const seen: string[] = [];
    auth.subscribe((reason) => seen.push(reason));
    auth.rejected();
    expect(auth.token()).toBeNull();
    expect(storage.items.has(STORAGE_KEY)).toBe(false);
    expect(seen).toEqual(['rejected']);
  });

  it('signs out an expiring token that has no refresh token instead of using it', async () => {
    const auth = new AuthSession(memoryStorage(), () => 100_000);
    auth.signIn({ accessToken: 'old', refreshToken: null, expiresAt: 100_000 + 1_000, kind: 'oidc' });
    expect(await auth.ensureToken()).toBeNull();
    expect(auth.signedIn).toBe(false);
  });
});

describe('OIDC with PKCE', () => {
  it('builds an authorize URL with an S256 challenge', async () => {
    const verifier = codeVerifier();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Checked against node's own SHA-256, an independent implementation.
    expect(await codeChallenge(verifier)).toBe(createHash('sha256').update(verifier).digest('base64url'));
    expect(await codeChallenge('dBjftJeZ4CVP-mJ92K1ucEqiSNvDNg6nEE4_wqI4D2U')).toBe('TycGtMjqSrQoY_ia5I3ehrSHmPliXtOdyDs9pon1NL8');
    const url = new URL(authorizeUrl(client, 'http://127.0.0.1:8092/', 'challenge', 'state-1'));
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toBe('challenge');
    expect(url.searchParams.get('state')).toBe('state-1');
    expect(url.searchParams.get('redirect_uri')).toBe('http://127.0.0.1:8092/');
  });

  it('exchanges the code with its verifier and stamps the expiry', async () => {
    answer = { status: 200, body: { access_token: 'at', refresh_token: 'rt', expires_in: 120, token_type: 'Bearer' } };
    forms.length = 0;
    const tokens = await exchangeCode(client, 'the-code', 'the-verifier', 'http://127.0.0.1:8092/', () => 1_000);
    expect(tokens).toEqual({ accessToken: 'at', refreshToken: 'rt', expiresAt: 121_000, kind: 'oidc' });
    expect(forms[0].get('grant_type')).toBe('authorization_code');
    expect(forms[0].get('code_verifier')).toBe('the-verifier');
  });

  it('refuses an answer without expires_in (a token must carry its expiry)', () => {
    expect(() => tokenSetFrom({ access_token: 'x' }, 0, null)).toThrow(OidcError);
    expect(() => tokenSetFrom({ expires_in: 60 }, 0, null)).toThrow(/access_token/);
  });

  it('keeps the old refresh token when the issuer does not rotate it', () => {
    expect(tokenSetFrom({ access_token: 'x', expires_in: 60 }, 0, 'keep').refreshToken).toBe('keep');
  });
});
