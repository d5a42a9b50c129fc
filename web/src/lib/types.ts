// The server's wire types (crates/nomos-http/src/dto.rs), as the UI reads them.

/** A session status (SESSION-1). */
export type SessionStatus =
  | 'active'
  | 'planning'
  | 'executing'
  | 'awaiting_input'
  | 'done'
  | 'failed'
  | 'partial';

/** The statuses that end a session. */
export const TERMINAL: readonly SessionStatus[] = ['done', 'failed', 'partial'];

/** Whether a status is terminal. */
export function isTerminal(status: string): boolean {
  return (TERMINAL as readonly string[]).includes(status);
}

/** `GET /api/sessions/{id}`. */
export interface SessionDto {
  id: string;
  status: SessionStatus;
  goal: string | null;
  /** For a session without a goal: its first operator message, shortened. */
  title?: string | null;
  summary: string | null;
  board_outcome: 'success' | 'failure' | 'partial' | null;
  plan_generation: number;
  assent_generation: number | null;
  assent_expires_at: string | null;
  /** CONTROL-6: when the operator archived it (off the board), if archived. */
  archived_at?: string | null;
  /** MCP-2: the outside client that drives it (`name version`), if any. */
  client?: string | null;
  /** AUTHZ-1: the principal that created it (for a client's session, the one driving it). */
  owner?: string | null;
  created_at: string;
  last_activity_at: string;
}

/** One plan step. */
export interface StepDto {
  generation: number;
  seq: number;
  title: string;
  detail: string | null;
  status: 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'replaced';
  note: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** GATE-9: the commands the step declared, each with its class. */
  commands?: DeclaredCommandDto[];
  /** SAFE-4: the step's read-only check and its last verdict, when it declared one. */
  check?: StepCheckDto | null;
}

/** SAFE-4: a step's check, as declared and classified at proposal, with its last verdict. */
export interface StepCheckDto {
  host: string;
  command: string;
  expect_exit: number | null;
  expect_output: string | null;
  state: 'pending' | 'passed' | 'failed';
  reason: string | null;
  execution_id: string | null;
}

/** GATE-9: one command a plan step declared, classified at proposal. */
export interface DeclaredCommandDto {
  /** The host, or the group (`tag:NAME`) as declared. */
  host: string;
  /** For a group: the hosts it stood for at proposal. */
  members: string[];
  command: string;
  class: string;
  reason: string;
  /** GATE-10: the preview run at proposal for a declared change with a preview form. */
  preview?: PreviewDto | null;
}

/** `GET /api/sessions/{id}/plan`. */
export interface PlanDto {
  generation: number;
  /** GATE-4: the digest of the current generation's plan as shown; a decision sends it back. */
  digest?: string | null;
  /** AUTHZ-3: how many distinct operators must approve the current plan. */
  approvers_required?: number;
  /** AUTHZ-3: who approved the current plan as shown so far. */
  approved_by?: string[];
  steps: StepDto[];
}

/** One activity line (ACTIVITY-1..4). */
export interface ActivityDto {
  at: string;
  key: string;
  kind: string;
  title: string;
  detail: string | null;
  state: string;
  generation: number | null;
  seq: number | null;
  execution_id: string | null;
  approval_id: string | null;
  duration_ms: number | null;
}

/** A tool call in the transcript. */
export interface TranscriptToolCall {
  call_id: string;
  name: string;
  arguments: string;
  result: string | null;
  outcome: 'ok' | 'refused' | 'error' | 'interrupted' | null;
  started_at: string | null;
  duration_ms: number | null;
}

/** One transcript message. */
export interface TranscriptMessage {
  id: string;
  role: 'operator' | 'assistant' | 'note' | string;
  content: string;
  created_at: string;
  tool_calls: TranscriptToolCall[];
}

/** Captured output (EXEC-5). */
export interface OutputDto {
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_cut: number;
  stderr_cut: number;
  duration_ms: number;
}

/** One execution (EXEC-1). */
export interface ExecutionDto {
  id: string;
  session_id: string;
  /** `command`, or `preview` for a read-only preview run before a request (GATE-10). */
  kind?: 'command' | 'preview' | string;
  host: string;
  command: string;
  class: 'read_only' | 'config_mutation' | 'destructive' | string;
  reason: string;
  status: string;
  generation: number;
  step_seq: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  output: OutputDto | null;
  error: string | null;
}

/** One approval request (GATE-7). */
export interface ApprovalDto {
  id: string;
  session_id: string;
  execution_id: string;
  command: string;
  host: string;
  /** The exact host set the approval covers (FLEET-1): one host unless it is a group. */
  hosts: string[];
  class: string;
  /** Why the command has that class (the execution's reason). */
  reason: string;
  generation: number;
  /** The plan step the command belongs to, if any. */
  step_seq: number | null;
  status: string;
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  /** GATE-9: "not in the approved plan" (with its step), or that the plan declared it. */
  plan_note?: string | null;
  /** GATE-10: the read-only preview run before the request was shown; part of its binding. */
  preview?: PreviewDto | null;
  /** AUTHZ-3: how many distinct operators must approve it. */
  approvers_required?: number;
  /** AUTHZ-3: who approved it so far. */
  approved_by?: string[];
}

/** GATE-10: one package an apt simulation would change. */
export interface PackageChangeDto {
  action: 'install' | 'upgrade' | 'remove' | 'purge' | string;
  name: string;
  from: string | null;
  to: string | null;
}

/** GATE-10: one preview command's run. */
export interface PreviewRunDto {
  command: string;
  status: 'ran' | 'failed' | 'not_run' | string;
  execution_id: string | null;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  cut: number;
  error: string | null;
}

/** GATE-10: a preview shown with a request. */
export interface PreviewDto {
  parser: 'apt_simulation' | 'unit_status' | 'sed_diff' | 'raw' | string;
  outcome: 'shown' | 'failed' | string;
  runs: PreviewRunDto[];
  packages: PackageChangeDto[];
  diff: string | null;
  file: string | null;
  /** FLEET-6: a fan-out's hosts grouped by what their previews say, smallest group first;
   * the fields above are the first group's. Empty for one host. */
  groups?: PreviewGroupDto[];
}

/** FLEET-6: hosts of a fan-out whose previews read the same. */
export interface PreviewGroupDto {
  hosts: string[];
  /** "18 hosts: 3 package(s) upgraded". */
  summary: string;
  outcome: 'shown' | 'failed' | string;
  runs: PreviewRunDto[];
  packages: PackageChangeDto[];
  diff: string | null;
}

/** CONTROL-3: one open assent window. */
export interface WindowDto {
  session_id: string;
  goal: string | null;
  generation: number;
  opened_at: string;
  expires_at: string;
  /** AUDIT-1: who granted it. */
  granted_by: string | null;
  request_id: string | null;
}

/** CONTROL-3: what the operator granted and what waits for the operator. */
export interface GrantsDto {
  now: string;
  windows: WindowDto[];
  approvals: ApprovalDto[];
}

/** OIDC client settings, when the server publishes them. */
export interface OidcClientInfo {
  authorization_endpoint: string;
  token_endpoint: string;
  client_id: string;
  scope?: string;
}

/** `GET /api/info`. */
export interface InfoDto {
  version: string;
  model: string;
  demo: boolean;
  notice: string | null;
  auth: 'none' | 'token' | 'oidc';
  oidc?: OidcClientInfo;
}
