// SAFE-1, SAFE-2: the ways back a session offers: each completed backup can be restored and
// each snapshot a guest took before a change can be rolled back to. The server decides what
// is a backup or a snapshot (the `safety` executions' reasons); this only lists them.
import type { ExecutionDto } from './types';

/** One way back: the net's execution and the request it files. */
export interface Undo {
  execution: ExecutionDto;
  action: 'restore' | 'rollback';
  label: string;
}

/** The completed backups and snapshots of a session, newest first. */
export function undos(executions: ExecutionDto[]): Undo[] {
  const out: Undo[] = [];
  for (const execution of executions) {
    if (execution.kind !== 'safety' || execution.status !== 'completed') continue;
    if (execution.output && execution.output.exit_code !== 0) continue;
    if (execution.reason.startsWith('SAFE-2: backup')) {
      out.push({ execution, action: 'restore', label: 'Restore' });
    } else if (execution.reason.startsWith('SAFE-1: snapshot')) {
      out.push({ execution, action: 'rollback', label: 'Rollback' });
    }
  }
  return out.reverse();
}
