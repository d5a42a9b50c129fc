// Terminal output for the operator: ANSI colour codes (SGR) become styled segments, every
// other escape sequence and stray control character is dropped, so nothing shows raw.

/** A run of text with one style. */
export interface Segment {
  text: string;
  /** Foreground colour name (`red`, `bright-green`...), or null for the default. */
  color: string | null;
  bold: boolean;
}

const COLORS = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

// CSI sequences (ESC [ ... final byte), OSC sequences (ESC ] ... BEL or ESC \), and other
// two-byte escapes.
// eslint-disable-next-line no-control-regex
const ESCAPE = /\u001b\[([0-9;?]*)([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/g;

/** Splits output into styled segments; only SGR (`ESC [ ... m`) changes the style. */
export function ansiSegments(output: string): Segment[] {
  const segments: Segment[] = [];
  let color: string | null = null;
  let bold = false;
  let at = 0;
  const push = (text: string) => {
    const clean = text.replace(/\r\n/g, '\n').replace(/\r/g, '\n').replace(CONTROL, '');
    if (!clean) return;
    const last = segments[segments.length - 1];
    if (last && last.color === color && last.bold === bold) last.text += clean;
    else segments.push({ text: clean, color, bold });
  };
  for (const match of output.matchAll(ESCAPE)) {
    push(output.slice(at, match.index));
    at = (match.index ?? 0) + match[0].length;
    if (match[2] !== 'm') continue;
    const codes = (match[1] || '0').split(';').map((c) => Number(c || '0'));
    for (const code of codes) {
      if (code === 0) {
        color = null;
        bold = false;
      } else if (code === 1) bold = true;
      else if (code === 22) bold = false;
      else if (code === 39) color = null;
      else if (code >= 30 && code <= 37) color = COLORS[code - 30];
      else if (code >= 90 && code <= 97) color = `bright-${COLORS[code - 90]}`;
    }
  }
  push(output.slice(at));
  return segments;
}

/** The output as plain text, without escape sequences (what the copy button copies). */
export function stripAnsi(output: string): string {
  return ansiSegments(output)
    .map((s) => s.text)
    .join('');
}

/** A byte count for people: `512 B`, `2.0 KiB`, `3.4 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
