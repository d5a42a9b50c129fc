// The login session: the token (static, or OIDC with its expiry and refresh token) kept in
// localStorage, refreshed before it lapses, and cleared on a 401 so the login shows again.

import type { TokenSet } from './oidc';

/** Where the session keeps its tokens. */
export const STORAGE_KEY = 'nomos.auth';

/** A token this close to its expiry is not used; it is refreshed first. */
export const REFRESH_MARGIN_MS = 30_000;

/** How the session gets new tokens from a refresh token. */
export type Refresher = (refreshToken: string) => Promise<TokenSet>;

/** Why the operator is (again) at the login page. */
export type LoggedOutReason = 'signed_out' | 'expired' | 'rejected';

/** The tokens of this browser tab, and the rules for using them. */
export class AuthSession {
  private tokens: TokenSet | null = null;
  private refreshing: Promise<string | null> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners = new Set<(reason: LoggedOutReason | 'refreshed' | 'signed_in') => void>();
  private readonly storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  private readonly now: () => number;
  /** Set when OIDC is configured; without it, an expiring token cannot be renewed. */
  refresher: Refresher | null = null;

  constructor(storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>, now: () => number = Date.now) {
    this.storage = storage;
    this.now = now;
    this.load();
  }

  /** Calls `listener` on sign-in, refresh and sign-out; returns the unsubscribe. */
  subscribe(listener: (reason: LoggedOutReason | 'refreshed' | 'signed_in') => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(reason: LoggedOutReason | 'refreshed' | 'signed_in'): void {
    for (const listener of this.listeners) listener(reason);
  }

  private load(): void {
    const text = this.storage.getItem(STORAGE_KEY);
    if (!text) return;
    try {
      const parsed = JSON.parse(text) as TokenSet;
      if (typeof parsed.accessToken === 'string' && parsed.accessToken) this.tokens = parsed;
    } catch {
      this.storage.removeItem(STORAGE_KEY);
    }
  }

  /** Whether a token is held (it may still need a refresh). */
  get signedIn(): boolean {
    return this.tokens !== null;
  }

  /** The kind of the held token. */
  get kind(): TokenSet['kind'] | null {
    return this.tokens?.kind ?? null;
  }

  /** When the held token expires (null: never, or none held). */
  get expiresAt(): number | null {
    return this.tokens?.expiresAt ?? null;
  }

  /** Signs in with tokens (a static token, or the result of an OIDC code exchange). */
  signIn(tokens: TokenSet): void {
    this.tokens = tokens;
    this.storage.setItem(STORAGE_KEY, JSON.stringify(tokens));
    this.schedule();
    this.emit('signed_in');
  }

  /** Forgets the tokens and tells listeners why. */
  signOut(reason: LoggedOutReason = 'signed_out'): void {
    const had = this.tokens !== null;
    this.tokens = null;
    this.refreshing = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.storage.removeItem(STORAGE_KEY);
    if (had || reason !== 'signed_out') this.emit(reason);
  }

  /** The token if it stays valid for the refresh margin, else null (never a stale token). */
  token(): string | null {
    const tokens = this.tokens;
    if (!tokens) return null;
    if (tokens.expiresAt !== null && tokens.expiresAt - this.now() <= REFRESH_MARGIN_MS) return null;
    return tokens.accessToken;
  }

  /** A usable token: the held one, or a refreshed one; null (and signed out) when neither. */
  async ensureToken(): Promise<string | null> {
    const current = this.token();
    if (current !== null || this.tokens === null) return current;
    return this.refresh();
  }

  /** Refreshes now (one refresh at a time); signs out when it fails. */
  refresh(): Promise<string | null> {
    if (this.refreshing) return this.refreshing;
    const tokens = this.tokens;
    if (!tokens || !tokens.refreshToken || !this.refresher) {
      this.signOut('expired');
      return Promise.resolve(null);
    }
    const refresher = this.refresher;
    const refreshToken = tokens.refreshToken;
    this.refreshing = (async () => {
      try {
        const next = await refresher(refreshToken);
        if (this.tokens !== tokens) return this.token();
        this.tokens = next;
        this.storage.setItem(STORAGE_KEY, JSON.stringify(next));
        this.schedule();
        this.emit('refreshed');
        return next.accessToken;
      } catch (error) {
        console.warn('nomos: token refresh failed', error);
        this.signOut('expired');
        return null;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Milliseconds until the held token should be refreshed (null: it never needs to be). */
  refreshDelay(): number | null {
    const expiresAt = this.tokens?.expiresAt;
    if (expiresAt === null || expiresAt === undefined) return null;
    return Math.max(0, expiresAt - REFRESH_MARGIN_MS - this.now());
  }

  /** Arms the timer that refreshes the token before it lapses. */
  schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const delay = this.refreshDelay();
    if (delay === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh();
    }, delay);
  }

  /** A 401 from the server: the token is not accepted; back to the login page. */
  rejected(): void {
    this.signOut('rejected');
  }
}

/** Takes `token=...` out of a URL fragment: the token, and the fragment without it. */
export function tokenFromFragment(hash: string): { token: string | null; rest: string } {
  const fragment = hash.startsWith('#') ? hash.slice(1) : hash;
  const params = new URLSearchParams(fragment);
  const token = params.get('token');
  if (token === null) return { token: null, rest: hash };
  params.delete('token');
  const rest = params.toString();
  return { token: token.trim() || null, rest: rest ? `#${rest}` : '' };
}
