// OIDC authorization code with PKCE: the authorize URL, the code exchange and the refresh,
// each returning tokens that carry their expiry.

import type { OidcClientInfo } from './types';

/** Tokens with the time the access token lapses. */
export interface TokenSet {
  /** The bearer token. */
  accessToken: string;
  /** The refresh token, when the issuer gave one. */
  refreshToken: string | null;
  /** When the access token expires (ms since the epoch); null: never (a static token). */
  expiresAt: number | null;
  /** Where it came from. */
  kind: 'static' | 'oidc';
}

/** Why a token request failed. */
export class OidcError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OidcError';
  }
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A random PKCE code verifier (43 characters of base64url). */
export function codeVerifier(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return base64url(bytes);
}

/** The S256 challenge of a verifier. */
export async function codeChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** The URL that starts a login at the issuer. */
export function authorizeUrl(
  client: OidcClientInfo,
  redirectUri: string,
  challenge: string,
  state: string,
): string {
  const url = new URL(client.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('scope', client.scope ?? 'openid profile offline_access');
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', state);
  return url.toString();
}

/** Reads a token endpoint's answer into a [`TokenSet`]; `now` stamps the expiry. */
export function tokenSetFrom(body: unknown, now: number, previousRefresh: string | null): TokenSet {
  const data = (body ?? {}) as Record<string, unknown>;
  if (typeof data.access_token !== 'string' || data.access_token.length === 0) {
    throw new OidcError('token endpoint answered without an access_token');
  }
  const expiresIn = Number(data.expires_in);
  if (!Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new OidcError(`token endpoint answered with expires_in=${String(data.expires_in)}; expected seconds above zero`);
  }
  return {
    accessToken: data.access_token,
    refreshToken: typeof data.refresh_token === 'string' ? data.refresh_token : previousRefresh,
    expiresAt: now + expiresIn * 1000,
    kind: 'oidc',
  };
}

async function tokenRequest(
  client: OidcClientInfo,
  form: Record<string, string>,
  now: () => number,
  previousRefresh: string | null,
  fetcher: typeof fetch,
): Promise<TokenSet> {
  let response: Response;
  try {
    response = await fetcher(client.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.client_id, ...form }).toString(),
    });
  } catch (error) {
    throw new OidcError(`token endpoint unreachable: ${String(error)}`);
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = (body as { error?: unknown; error_description?: unknown } | null) ?? {};
    const reason = [detail.error, detail.error_description].filter((x) => typeof x === 'string').join(': ');
    throw new OidcError(`token endpoint answered ${response.status}${reason ? ` (${reason})` : ''}`);
  }
  return tokenSetFrom(body, now(), previousRefresh);
}

/** Exchanges an authorization code for tokens. */
export function exchangeCode(
  client: OidcClientInfo,
  code: string,
  verifier: string,
  redirectUri: string,
  now: () => number = Date.now,
  fetcher: typeof fetch = fetch,
): Promise<TokenSet> {
  return tokenRequest(
    client,
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri },
    now,
    null,
    fetcher,
  );
}

/** Gets a new access token with a refresh token. */
export function refreshTokens(
  client: OidcClientInfo,
  refreshToken: string,
  now: () => number = Date.now,
  fetcher: typeof fetch = fetch,
): Promise<TokenSet> {
  return tokenRequest(
    client,
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    now,
    refreshToken,
    fetcher,
  );
}
