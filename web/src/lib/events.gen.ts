// Generated from crates/nomos-http/openapi.json by web/scripts/wire-types.mjs: do not edit.
// Run `npm --prefix web run generate` after `UPDATE_OPENAPI=1 cargo test -p nomos-http --test it openapi`.

/** GATE-7: an approval's status. */
export type ApprovalStatusDto = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';

/** GATE-4: why an assent window closed (`unrecorded`: before reasons were recorded). */
export type AssentCloseReasonDto = 'plan_finished' | 'plan_revised' | 'plan_replaced' | 'session_ended' | 'expired' | 'renewed' | 'revoked' | 'stopped' | 'declared_changed' | 'unrecorded';

/** SAFE-2: one file a backup copied. */
export interface BackedUpFileDto {
  /** Where its copy is. */
  copy: string;
  /** Owner gid. */
  gid: number;
  /** Mode in octal (`644`). */
  mode: string;
  /** The file's path on the host. */
  path: string;
  /** SHA-256 of the content, hex. */
  sha256: string;
  /** Size in bytes. */
  size: number;
  /** Owner uid. */
  uid: number;
}

/** SAFE-4: whether a check passed. */
export type CheckVerdictDto =
  /** The check gave what the step expects. */
  | {
    verdict: 'passed';
  }
  /** It did not. */
  | {
    /** What it gave against what was expected, with the head of its output. */
    reason: string;
    verdict: 'failed';
  };

/** CLASSIFY-1: a command's class. */
export type CommandClassDto = 'read_only' | 'config_mutation' | 'destructive';

/** What happened; `type` is the event's kind, also the SSE `event:` field. */
export type EventDto =
  /** The session was created. */
  | {
    type: 'session.created';
  }
  /** SESSION-6: the status changed. */
  | {
    /** Previous status. */
    from: SessionStatusDto;
    /** Why (completion summary, sweep reason...). */
    reason: string | null;
    /** New status. */
    to: SessionStatusDto;
    type: 'task.status';
  }
  /** The goal was set (or reset). */
  | {
    /** The goal text. */
    goal: string;
    type: 'task.goal';
  }
  /** WRITEBACK-2: the board shows this outcome while the session stays open. */
  | {
    /** Outcome shown. */
    outcome: OutcomeDto;
    type: 'task.board_outcome';
  }
  /** PLAN-2/3: a plan (generation) was proposed or revised. */
  | {
    /** The generation the steps belong to. */
    generation: number;
    /** Why the plan was revised, for a new generation after execution started. */
    revision_reason: string | null;
    /** Step titles in seq order (seq = index + 1). */
    steps: string[];
    type: 'plan.proposed';
  }
  /** PLAN-9: a step started. */
  | {
    /** Generation. */
    generation: number;
    /** Seq within the generation. */
    seq: number;
    type: 'plan.step.started';
  }
  /** PLAN-9: a step reached a closed status (`done`, `failed`, `skipped`, `replaced`). */
  | {
    /** Generation. */
    generation: number;
    /** Seq within the generation. */
    seq: number;
    /** The status it closed with. */
    status: StepStatusDto;
    type: 'plan.step.finished';
  }
  /** SAFE-4: a step's check ran and decided the step. */
  | {
    /** The execution (kind `check`) that ran it. */
    execution_id: string;
    /** Generation. */
    generation: number;
    /** Seq within the generation. */
    seq: number;
    type: 'plan.step.checked';
    /** Whether it passed, and why not. */
    verdict: CheckVerdictDto;
  }
  /** SAFE-1..3: one action of a safety net around a change. */
  | {
    /** What it did. */
    action: SafetyActionDto;
    /** The change the net guards (for a restore: the restore's own execution). */
    execution_id: string;
    /** The net's execution, kind `safety` (for a restore: the backup it restores). */
    safety_execution_id: string;
    type: 'safety.net';
  }
  /** GATE-4: the operator assented to a plan generation. */
  | {
    /** When the window closes. */
    expires_at: string;
    /** Generation assented to. */
    generation: number;
    /** AUDIT-1: who assented. */
    granted_by?: string;
    /** AUDIT-1: the id of the request that carried the assent. */
    request_id?: string;
    type: 'plan.assent';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** GATE-4: the assent window closed, once per window, with the reason. */
  | {
    /** Generation whose window closed. */
    generation: number;
    /** Why it closed. */
    reason: AssentCloseReasonDto;
    type: 'assent.closed';
  }
  /** An execution was created. */
  | {
    /** Its class. */
    class: CommandClassDto;
    /** Exact command. */
    command: string;
    /** Its id. */
    execution_id: string;
    /** Host slug. */
    host: string;
    /** Initial status. */
    status: ExecutionStatusDto;
    type: 'execution.created';
  }
  /** An execution moved to a new status. */
  | {
    /** Error text when failed or cancelled. */
    error: string | null;
    /** Its id. */
    execution_id: string;
    /** Exit code when completed. */
    exit_code: number | null;
    /** New status. */
    status: ExecutionStatusDto;
    type: 'execution.status';
  }
  /** GATE-7: an approval request was made. */
  | {
    /** Its id. */
    approval_id: string;
    /** The execution it guards. */
    execution_id: string;
    /** When it expires. */
    expires_at: string;
    type: 'approval.requested';
  }
  /** GATE-7: an approval was decided, expired or voided. */
  | {
    /** Its id. */
    approval_id: string;
    /** AUDIT-1: who decided it, for an operator's decision. */
    decided_by?: string;
    /** Why, when Nomos (not the operator) ended it. */
    reason?: string;
    /** AUDIT-1: the id of the request that carried the decision. */
    request_id?: string;
    /** Its final status. */
    status: ApprovalStatusDto;
    type: 'approval.resolved';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** A transcript message was appended. */
  | {
    /** Its id. */
    message_id: string;
    /** Who wrote it. */
    role: RoleDto;
    type: 'message.appended';
  }
  /** TURN-4: a tool call was recorded with its result. */
  | {
    /** The model's call id. */
    call_id: string;
    /** Tool name. */
    name: string;
    /** How it ended. */
    outcome: ToolCallOutcomeDto;
    type: 'tool.called';
  }
  /** SECRET-2: secrets in a tool result were redacted before the model read it. */
  | {
    /** The tool call whose result was redacted. */
    call_id: string;
    /** Each kind redacted, with its count. */
    kinds: RedactedKindDto[];
    /** The tool's name. */
    tool: string;
    type: 'output.redacted';
  }
  /** SWEEP-1: the idle sweep nudged the session. */
  | {
    type: 'task.nudged';
  }
  /** TURN-1: a turn started. */
  | {
    /** What started it. */
    cause: TurnCauseDto;
    type: 'turn.started';
  }
  /** TURN-1: a turn ended; exactly once per turn, after any error. */
  | {
    /** The real cause when the turn failed (TURN-2); null when it ended well. */
    error: string | null;
    /** How many tool calls the turn made. */
    n_tool_calls: number;
    type: 'turn.done';
  }
  /** CONTROL-1: the operator stopped the running turn. */
  | {
    /** The id of the request that carried the stop. */
    request_id?: string;
    /** Who stopped it. */
    stopped_by?: string;
    type: 'turn.stopped';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** CONTROL-2: the operator revoked the assent window; its `assent.closed` follows. */
  | {
    /** Generation whose window was revoked. */
    generation: number;
    /** The id of the request that carried the revoke. */
    request_id?: string;
    /** Who revoked it. */
    revoked_by?: string;
    type: 'assent.revoked';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** GATE-4: the operator rejected the waiting plan through the decision endpoint. */
  | {
    /** The generation rejected. */
    generation: number;
    /** Why, in the operator's words. */
    reason?: string;
    /** Who rejected it. */
    rejected_by?: string;
    /** The id of the request that carried the decision. */
    request_id?: string;
    type: 'plan.rejected';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** CONTROL-5: the operator closed an open task as failed or partial, with a note. */
  | {
    /** Who closed it. */
    closed_by?: string;
    /** The operator's note. */
    note?: string;
    /** `failure` or `partial`. */
    outcome: OutcomeDto;
    /** The id of the request that carried the close. */
    request_id?: string;
    type: 'task.closed';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** CONTROL-6: the operator archived a session off the board, or brought it back. */
  | {
    /** Whether it is archived now. */
    archived: boolean;
    /** Who did it. */
    by?: string;
    type: 'session.archived';
  }
  /** AUTHZ-3: one operator approved a request that needs several; it still waits. */
  | {
    /** The approval. */
    approval_id: string;
    /** How many distinct operators approved it so far. */
    approvals: number;
    /** Who approved it now. */
    approved_by: string;
    /** AUDIT-1: the id of the request that carried the approval. */
    request_id?: string;
    /** How many it needs. */
    required: number;
    type: 'approval.progress';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /**
   * AUTHZ-3: one operator approved a plan that needs several; it still waits and nothing
   * of it runs.
   */
  | {
    /** How many distinct operators approved it so far. */
    approvals: number;
    /** Who approved it now. */
    approved_by: string;
    /** The plan generation approved. */
    generation: number;
    /** AUDIT-1: the id of the request that carried the decision. */
    request_id?: string;
    /** How many it needs. */
    required: number;
    type: 'plan.progress';
    /** AUDIT-1: the OIDC `preferred_username` of who it was. */
    username?: string;
  }
  /** AUTHZ-2, AUTHZ-3: a decision refused because of who made it; nothing else changed. */
  | {
    /** The approval it named, for an approval decision. */
    approval_id?: string;
    /** What it tried to decide: `assent`, `plan_decision` or `approval`. */
    decision: string;
    /** Who tried, when the decision named someone. */
    principal?: string;
    /** Why it was refused. */
    reason: string;
    /** The id of the request that carried it. */
    request_id?: string;
    type: 'decision.refused';
  };

/**
 * A committed event: the `data:` of a durable frame of `GET /api/events` and
 * `GET /api/sessions/{id}/events`.
 */
export interface EventRecordDto {
  /** When it happened. */
  at: string;
  /** What happened. */
  event: EventDto;
  /** Position in the global log (the id of `GET /api/events`). */
  global_seq: number;
  /** Position in the session's log, from 1 (the id of a session's stream). */
  seq: number;
  /** The session it belongs to. */
  session_id: string;
}

/** EXEC-1: an execution's status. */
export type ExecutionStatusDto = 'pending_approval' | 'approved' | 'running' | 'completed' | 'failed' | 'cancelled' | 'armed' | 'reverted';

/** The outcome a session ended with, or the board shows. */
export type OutcomeDto = 'success' | 'failure' | 'partial';

/** SECRET-2: one kind of secret redacted, and how many. */
export interface RedactedKindDto {
  /** How many were replaced. */
  count: number;
  /** The kind the marker names (`private key`, `aws key`, ...). */
  kind: string;
}

/** Who wrote a transcript message. */
export type RoleDto = 'operator' | 'assistant' | 'note';

/** SAFE-1..3: what a safety-net event records. */
export type SafetyActionDto =
  /** A backup of the named paths started before the change. */
  | {
    action: 'backup_started';
    /** The paths the classifier named (those that exist are copied). */
    paths: string[];
  }
  /** One file was copied. */
  | {
    action: 'backed_up';
    /** The file, its copy, owner, mode and checksum. */
    file: BackedUpFileDto;
  }
  /** An old backup was removed (size and age caps). */
  | {
    action: 'pruned';
    /** The backup's directory name. */
    backup: string;
  }
  /** The net failed and the change was stopped before it ran. */
  | {
    action: 'stopped';
    /** Why. */
    reason: string;
  }
  /** The operator asked for a Restore; it waits for approval. */
  | {
    action: 'restore_requested';
    /** The approval it waits for. */
    approval_id: string;
  }
  /** SAFE-1: a snapshot of the change's Proxmox guest was taken on its node. */
  | {
    action: 'snapshot_taken';
    /** The guest's host slug. */
    guest: string;
    /** The snapshot's name (`nomos-...`). */
    name: string;
    /** The node it was taken on. */
    node: string;
    /** The guest's id. */
    vmid: number;
  }
  /** SAFE-1: an older Nomos snapshot of the guest was deleted. */
  | {
    action: 'snapshot_pruned';
    /** The snapshot's name. */
    name: string;
  }
  /** SAFE-1: the operator asked for a Rollback; it waits for approval. */
  | {
    action: 'rollback_requested';
    /** The approval it waits for. */
    approval_id: string;
  }
  /** SAFE-3: the revert of a change that can cut the operator off was armed on its host. */
  | {
    action: 'armed';
    /** The timer unit, the `at` job number or the pid. */
    handle: string;
    /** How it was scheduled: `systemd`, `at` or `nohup`. */
    mechanism: string;
    /** When it fires unless the operator confirms. */
    until: string;
    /** Seconds from arming to the revert. */
    window_secs: number;
  }
  /** SAFE-3: the check over a new SSH connection after the change. */
  | {
    action: 'checked';
    /** What it said (or why it could not run). */
    detail: string;
    /** Whether the host answered and the check passed. */
    ok: boolean;
  }
  /** SAFE-3: the operator confirmed the change and its revert was disarmed. */
  | {
    action: 'disarmed';
    /** Who confirmed (absent when the check disarmed it). */
    by?: string | null;
  }
  /** SAFE-3: the revert fired on the host. */
  | {
    action: 'reverted';
    /** Whether it ran to its end. */
    done: boolean;
    /** Steps that failed. */
    failed: string[];
    /** What it reloaded (`sshd`, `firewall`, `routes`, `interfaces`, `dns`). */
    reloaded: string[];
    /** The files it put back. */
    restored: string[];
  };

/** SESSION-1: a session's status. */
export type SessionStatusDto = 'active' | 'planning' | 'executing' | 'awaiting_input' | 'done' | 'failed' | 'partial';

/** PLAN-1: a plan step's status. */
export type StepStatusDto = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'replaced';

/** TURN-4: how a tool call ended. */
export type ToolCallOutcomeDto = 'ok' | 'refused' | 'error' | 'interrupted';

/** TURN-1: what started a turn. */
export type TurnCauseDto = 'operator' | 'continuation' | 'resume' | 'nudge';

/** Every durable event kind the server sends (`DomainEvent::kind`, the SSE `event:` field). */
export const EVENT_KINDS = [
  'session.created',
  'task.status',
  'task.goal',
  'task.board_outcome',
  'plan.proposed',
  'plan.step.started',
  'plan.step.finished',
  'plan.step.checked',
  'safety.net',
  'plan.assent',
  'assent.closed',
  'execution.created',
  'execution.status',
  'approval.requested',
  'approval.resolved',
  'message.appended',
  'tool.called',
  'output.redacted',
  'task.nudged',
  'turn.started',
  'turn.done',
  'turn.stopped',
  'assent.revoked',
  'plan.rejected',
  'task.closed',
  'session.archived',
  'approval.progress',
  'plan.progress',
  'decision.refused',
] as const;

/** A durable event kind. */
export type EventKind = (typeof EVENT_KINDS)[number];

/** The event of one kind. */
export type EventOf<K extends EventKind> = Extract<EventDto, { type: K }>;
