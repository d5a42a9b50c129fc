// The server's REST API, with the bearer token on every call and a 401 ending the session.

import type { AuthSession } from './auth';
import type {
  ActivityDto,
  ApprovalDto,
  ExecutionDto,
  GrantsDto,
  InfoDto,
  PlanDto,
  SessionDto,
  TranscriptMessage,
} from './types';

/** A request the server refused or could not answer. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiFailure';
    this.status = status;
    this.code = code;
  }
}

/** The API client of one page. */
export class Api {
  readonly auth: AuthSession;
  private readonly fetcher: typeof fetch;

  constructor(auth: AuthSession, fetcher: typeof fetch = (...args) => fetch(...args)) {
    this.auth = auth;
    this.fetcher = fetcher;
  }

  /** Sends a request; JSON in, JSON out. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = await this.auth.ensureToken();
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetcher(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new ApiFailure(0, 'network', `the server is unreachable (${String(error)})`);
    }
    if (response.status === 401) {
      // Only a token that was sent can have been refused; without one, this is just "sign in".
      if (token) this.auth.rejected();
      throw new ApiFailure(401, 'unauthorized', 'the server did not accept the token; sign in again');
    }
    const text = await response.text();
    let data: unknown = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!response.ok) {
      const error = (data as { error?: { code?: string; message?: string } } | null)?.error;
      throw new ApiFailure(
        response.status,
        error?.code ?? 'http',
        error?.message ?? `${method} ${path} answered ${response.status}`,
      );
    }
    return data as T;
  }

  info(): Promise<InfoDto> {
    return this.request('GET', '/api/info');
  }

  sessions(): Promise<SessionDto[]> {
    return this.request('GET', '/api/sessions?limit=1000');
  }

  session(id: string): Promise<SessionDto> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}`);
  }

  createSession(): Promise<SessionDto> {
    return this.request('POST', '/api/sessions');
  }

  postMessage(id: string, text: string): Promise<unknown> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/messages`, { text });
  }

  resume(id: string): Promise<unknown> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/resume`);
  }

  plan(id: string): Promise<PlanDto> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/plan?all=true`);
  }

  activity(id: string): Promise<ActivityDto[]> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/activity`);
  }

  transcript(id: string): Promise<TranscriptMessage[]> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/transcript`);
  }

  sessionExecutions(id: string): Promise<ExecutionDto[]> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/executions`);
  }

  /** Executions, oldest first unless `order` is `desc`; `before` is the previous page's last id. */
  executions(
    options: { status?: string; order?: 'asc' | 'desc'; limit?: number; before?: string } = {},
  ): Promise<ExecutionDto[]> {
    return this.request('GET', `/api/executions?${executionsQuery(options)}`);
  }

  approvals(sessionId?: string): Promise<ApprovalDto[]> {
    const query = sessionId ? `?session_id=${encodeURIComponent(sessionId)}` : '';
    return this.request('GET', `/api/approvals${query}`);
  }

  /** CONTROL-4: a denial may carry the operator's reason, which the model is told. */
  decide(approvalId: string, decision: 'approve' | 'deny', reason?: string): Promise<unknown> {
    const why = decision === 'deny' ? reason?.trim() : undefined;
    const body = why ? { decision, reason: why } : { decision };
    return this.request('POST', `/api/approvals/${encodeURIComponent(approvalId)}/decision`, body);
  }

  /** CONTROL-1: stops the session's running turn. */
  stop(id: string): Promise<unknown> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/stop`);
  }

  /** CONTROL-2: closes the session's open assent window. */
  revokeAssent(id: string): Promise<unknown> {
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/assent/revoke`);
  }

  /** GATE-4: approves or rejects the waiting plan of `generation` whose digest the operator
   * was shown (409 when it no longer waits, or when the plan was proposed again since). */
  decidePlan(
    id: string,
    generation: number,
    digest: string | null,
    decision: 'approve' | 'reject',
    reason?: string,
  ): Promise<unknown> {
    const body: { generation: number; digest: string | null; decision: string; reason?: string } = {
      generation,
      digest,
      decision,
    };
    if (reason && reason.trim()) body.reason = reason.trim();
    return this.request('POST', `/api/sessions/${encodeURIComponent(id)}/plan/decision`, body);
  }

  /** CONTROL-2: cancels a pending approval; its command never runs. */
  cancelApproval(approvalId: string): Promise<unknown> {
    return this.request('POST', `/api/approvals/${encodeURIComponent(approvalId)}/cancel`);
  }

  /** SAFE-1, SAFE-2: files a backup's Restore or a snapshot's Rollback; it waits for approval. */
  requestUndo(sessionId: string, executionId: string, action: 'restore' | 'rollback'): Promise<{ approval_id: string }> {
    return this.request(
      'POST',
      `/api/sessions/${encodeURIComponent(sessionId)}/executions/${encodeURIComponent(executionId)}/${action}`,
    );
  }

  /** CONTROL-3: open assent windows and pending approvals. */
  grants(): Promise<GrantsDto> {
    return this.request('GET', '/api/grants');
  }

  /** Every approval of one session, newest first (decided ones say who decided). */
  sessionApprovals(id: string): Promise<ApprovalDto[]> {
    return this.request('GET', `/api/sessions/${encodeURIComponent(id)}/approvals`);
  }
}

/** The query string of `GET /api/executions`. */
export function executionsQuery(options: { status?: string; order?: 'asc' | 'desc'; limit?: number; before?: string }): string {
  const params = new URLSearchParams();
  if (options.status) params.set('status', options.status);
  if (options.order) params.set('order', options.order);
  params.set('limit', String(options.limit ?? 100));
  if (options.before) params.set('before', options.before);
  return params.toString();
}
