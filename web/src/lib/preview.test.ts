// Unit tests of what an approval card shows of a preview (GATE-10).
import { describe, expect, it } from 'vitest';
import { diffLines, packageSummary, previewHeadline, versionChange } from './preview';
import type { PreviewDto } from './types';

const apt: PreviewDto = {
  parser: 'apt_simulation',
  outcome: 'shown',
  runs: [{ command: 'apt-get -s -o Dir::Log::Planner= install curl', status: 'ran', execution_id: null, exit_code: 0, stdout: 'Inst curl', stderr: '', cut: 0, error: null }],
  packages: [
    { action: 'install', name: 'libcurl4', from: null, to: '7.88.1' },
    { action: 'install', name: 'curl', from: null, to: '7.88.1' },
    { action: 'remove', name: 'nano', from: '7.2-1', to: null },
    { action: 'upgrade', name: 'libssl3', from: '3.0.11-1', to: '3.0.11-2' },
  ],
  diff: null,
  file: null,
};

describe('preview', () => {
  it('counts the packages a simulation would change, in a stable order', () => {
    expect(packageSummary(apt.packages)).toBe('2 to install, 1 to upgrade, 1 to remove');
    expect(packageSummary([])).toBe('no package changes');
    expect(previewHeadline(apt)).toBe('Simulation: 2 to install, 1 to upgrade, 1 to remove');
  });

  it('shows a version change, a new version or the removed one', () => {
    expect(versionChange(apt.packages[3])).toBe('3.0.11-1 → 3.0.11-2');
    expect(versionChange(apt.packages[0])).toBe('→ 7.88.1');
    expect(versionChange(apt.packages[2])).toBe('7.2-1');
  });

  it('types each line of a unified diff', () => {
    const lines = diffLines('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-port 80\n+port 8080\n keep\n');
    expect(lines.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'del', 'add', 'context']);
    expect(lines[4].text).toBe('+port 8080');
    expect(diffLines('')).toEqual([]);
    expect(diffLines(null)).toEqual([]);
  });

  it('says a failed preview failed, which command and why, and that the request is still decidable', () => {
    const failed: PreviewDto = {
      ...apt,
      outcome: 'failed',
      packages: [],
      runs: [{ ...apt.runs[0], status: 'failed', exit_code: 100, error: 'exit 100' }],
    };
    expect(previewHeadline(failed)).toBe('Preview failed (`apt-get -s -o Dir::Log::Planner= install curl`: exit 100); you can still decide');
  });

  it('names the file of a sed preview', () => {
    const sed: PreviewDto = { ...apt, parser: 'sed_diff', packages: [], diff: '--- a/f\n', file: '/etc/app.conf' };
    expect(previewHeadline(sed)).toBe('Changes to /etc/app.conf');
    expect(previewHeadline({ ...sed, diff: '' })).toBe('No change to /etc/app.conf');
  });
});
