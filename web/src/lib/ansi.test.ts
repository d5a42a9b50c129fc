// Unit tests of the terminal output rendering.
import { describe, expect, it } from 'vitest';
import { ansiSegments, formatBytes, stripAnsi } from './ansi';

describe('ansiSegments', () => {
  it('turns colour codes into styled runs and resets them', () => {
    expect(ansiSegments('ok \u001b[1;31mFAIL\u001b[0m done')).toEqual([
      { text: 'ok ', color: null, bold: false },
      { text: 'FAIL', color: 'red', bold: true },
      { text: ' done', color: null, bold: false },
    ]);
  });

  it('knows the bright colours and the default-colour code', () => {
    expect(ansiSegments('\u001b[92mgreen\u001b[39mplain')).toEqual([
      { text: 'green', color: 'bright-green', bold: false },
      { text: 'plain', color: null, bold: false },
    ]);
  });

  it('drops cursor moves, titles and control characters but keeps tabs and new lines', () => {
    const raw = '\u001b]0;title\u0007a\u001b[2K\tb\r\nc\u0008\u001b[?25l';
    expect(stripAnsi(raw)).toBe('a\tb\nc');
  });

  it('leaves plain text alone', () => {
    expect(stripAnsi('Filesystem  Size\n/dev/sda1  10G\n')).toBe('Filesystem  Size\n/dev/sda1  10G\n');
    expect(ansiSegments('')).toEqual([]);
  });
});

describe('formatBytes', () => {
  it('reads as bytes, KiB and MiB', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(2048)).toBe('2.0 KiB');
    expect(formatBytes(3.5 * 1024 * 1024)).toBe('3.5 MiB');
  });
});
