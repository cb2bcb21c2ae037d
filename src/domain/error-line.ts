import { cutText } from './text.js';

/**
 * Which line of a job's output becomes its run's error (a command launcher's
 * command, a ping's body: the last one printed; an http launcher's failed
 * answer: its first), read as a terminal shows it. Output is untrusted and often written for a terminal: colours (ANSI
 * escapes), progress lines redrawn with carriage returns, a bell, or a
 * binary file cat'ed by mistake. The error is what alerts show and group
 * by, so it holds none of that. Pure.
 */

/** ANSI escape sequences: CSI (colours, cursor moves) and OSC (titles, links), ended by BEL or ST. */
export const ANSI_ESCAPES = /\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;

/** C0 and C1 control characters and DEL, but for the tab (a space) and the line break (which ends the line). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** The longest error line kept. */
export const ERROR_LINE_MAX = 500;

/** What a terminal shows of one line: what follows its last carriage return, colours and control characters gone. */
function shownText(raw: string): string {
  const line = raw.replace(/\r+$/, '');
  return line
    .slice(line.lastIndexOf('\r') + 1)
    .replace(ANSI_ESCAPES, '')
    .replace(/\t/g, ' ')
    .replace(CONTROL, '')
    .trim();
}

/** Binary noise rather than text: a quarter or more of it is undecodable bytes (U+FFFD). */
function isReadable(line: string): boolean {
  if (!line) return false;
  const undecodable = line.match(/\uFFFD/g)?.length ?? 0;
  return undecodable * 4 < [...line].length;
}

/** The last readable line of `output`, cleaned and cut to ERROR_LINE_MAX; undefined when there is none. */
export function errorLineOf(output: string | null | undefined): string | undefined {
  if (!output) return undefined;
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = shownText(lines[i]!);
    if (isReadable(line)) return cutText(line, ERROR_LINE_MAX);
  }
  return undefined;
}

/** The first readable line of `output`, cleaned and cut to `max` (an http target's failed answer: its headline). */
export function firstReadableLine(output: string | null | undefined, max: number = ERROR_LINE_MAX): string | undefined {
  for (const raw of output ? output.split('\n') : []) {
    const line = shownText(raw);
    if (isReadable(line)) return cutText(line, max);
  }
  return undefined;
}
