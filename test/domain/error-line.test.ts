import { describe, expect, it } from 'vitest';
import { errorLineOf } from '../../src/domain/error-line.js';

describe("the line of a job's output that becomes its error", () => {
  it('is the last line printed, trimmed; CRLF endings are line endings', () => {
    expect(errorLineOf('starting\npsql: connection refused\n')).toBe('psql: connection refused');
    expect(errorLineOf('fine\r\nError: boom\r\n\r\n')).toBe('Error: boom');
    expect(errorLineOf('')).toBeUndefined();
    expect(errorLineOf(' \n\t\n')).toBeUndefined();
  });

  it('reads as a terminal shows it: colours gone, a progress line overwritten by carriage returns is what it ended with', () => {
    expect(errorLineOf('\x1b[1;31mERROR\x1b[0m: db down\n')).toBe('ERROR: db down');
    // An OSC 8 hyperlink keeps its visible text, not its target.
    expect(errorLineOf('Error: \x1b]8;;http://evil.example\x1b\\see log\x1b]8;;\x1b\\ here\n')).toBe('Error: see log here');
    expect(errorLineOf('dl 10%\rdl 50%\rfailed: checksum mismatch')).toBe('failed: checksum mismatch');
  });

  it('holds no control characters (a bell, a backspace, a stray escape); a tab is a space', () => {
    expect(errorLineOf('bell\x07 and \bback\x1b\tthere\x7f\n')).toBe('bell and back there');
  });

  it('skips binary noise at the end for the last readable line; all noise is no line', () => {
    const noise = '\uFFFD\uFFFD\u0001\uFFFDz\uFFFD\uFFFD\u0002\uFFFD';
    expect(errorLineOf(`Error: real cause\n${noise}\n${noise}`)).toBe('Error: real cause');
    expect(errorLineOf(noise)).toBeUndefined();
    // A word with one undecodable byte is still text.
    expect(errorLineOf('Fehler: Datei f\uFFFDr Kunde fehlt\n')).toBe('Fehler: Datei f\uFFFDr Kunde fehlt');
  });

  it('is cut to 500 characters, never inside an emoji', () => {
    expect(errorLineOf('x'.repeat(2000))).toHaveLength(500);
    const cut = errorLineOf(`${'x'.repeat(499)}😀tail`)!;
    expect(cut).toBe('x'.repeat(499));
  });
});
