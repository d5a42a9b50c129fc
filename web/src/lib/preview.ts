// GATE-10: what an approval card shows of a preview: the packages an apt simulation would
// change, a unified diff line by line, and one headline that says whether it could be shown.
import type { PackageChangeDto, PreviewDto } from './types';

/** One line of a unified diff, with what it is. */
export interface DiffLine {
  kind: 'file' | 'hunk' | 'add' | 'del' | 'context';
  text: string;
}

/** Splits a unified diff into typed lines (for colouring); an empty diff has none. */
export function diffLines(diff: string | null | undefined): DiffLine[] {
  if (!diff) return [];
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  return lines.map((text) => {
    if (text.startsWith('--- ') || text.startsWith('+++ ')) return { kind: 'file', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'del', text };
    return { kind: 'context', text };
  });
}

const VERBS: Record<string, string> = {
  install: 'to install',
  upgrade: 'to upgrade',
  remove: 'to remove',
  purge: 'to purge',
};

/** "2 to install, 1 to remove" in a stable order; "no package changes" when none. */
export function packageSummary(packages: PackageChangeDto[]): string {
  const counts = new Map<string, number>();
  for (const p of packages) counts.set(p.action, (counts.get(p.action) ?? 0) + 1);
  const parts = Object.keys(VERBS)
    .filter((action) => counts.has(action))
    .map((action) => `${counts.get(action)} ${VERBS[action]}`);
  for (const [action, n] of counts) if (!(action in VERBS)) parts.push(`${n} ${action}`);
  return parts.length ? parts.join(', ') : 'no package changes';
}

/** A package's version change: "1.0 → 1.1", "→ 1.1" for a new one, "1.0" for a removal. */
export function versionChange(p: PackageChangeDto): string {
  if (p.from && p.to) return `${p.from} → ${p.to}`;
  if (p.to) return `→ ${p.to}`;
  return p.from ?? '';
}

/** The preview's headline on the card. */
export function previewHeadline(preview: PreviewDto): string {
  if (preview.outcome !== 'shown') {
    const failed = preview.runs.find((r) => r.status !== 'ran');
    const why = failed?.error ? `: ${failed.error}` : '';
    return `Preview failed${failed ? ` (\`${failed.command}\`${why})` : ''}; you can still decide`;
  }
  switch (preview.parser) {
    case 'apt_simulation':
      return `Simulation: ${packageSummary(preview.packages)}`;
    case 'sed_diff':
      return preview.diff ? `Changes to ${preview.file ?? 'the file'}` : `No change to ${preview.file ?? 'the file'}`;
    default:
      return 'Preview';
  }
}
