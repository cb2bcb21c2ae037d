import { describe, expect, it } from 'vitest';
import { exitStatusText, signalOfShellExit } from '../../src/domain/exit-status.js';
import { fingerprintError } from '../../src/domain/fingerprint.js';

describe('how a command ended, as the operator reads it', () => {
  it('names a signal Node reports, and keeps the long-standing text of an ordinary exit code', () => {
    expect(exitStatusText(null, 'SIGSEGV')).toBe('killed by SIGSEGV');
    expect(exitStatusText(3, null)).toBe('exited with code 3');
    expect(exitStatusText(127, null)).toBe('exited with code 127');
    expect(exitStatusText(128, null)).toBe('exited with code 128');
    expect(exitStatusText(null, null)).toBe('ended without an exit code');
  });

  it("reads the shell's 128 + N as the signal N, keeping the code it was given", () => {
    expect(exitStatusText(139, null)).toBe('killed by SIGSEGV (exit code 139)');
    expect(exitStatusText(137, null)).toBe('killed by SIGKILL (exit code 137)');
    expect(exitStatusText(143, null)).toBe('killed by SIGTERM (exit code 143)');
    expect(exitStatusText(130, null)).toBe('killed by SIGINT (exit code 130)');
    // Numbers that differ between Linux and macOS (SIGBUS is 7 on one, 10 on the other) are not guessed at.
    expect(exitStatusText(135, null)).toBe('killed by signal 7 (exit code 135)');
    expect(signalOfShellExit(159)).toBe('signal 31');
    // Above the standard signals a program's own code is likelier.
    expect(exitStatusText(160, null)).toBe('exited with code 160');
    expect(exitStatusText(255, null)).toBe('exited with code 255');
  });

  it('groups errors by what killed the command: a segfault is not an exit 1, nor an OOM kill', () => {
    const group = (code: number | null, signal: string | null) => fingerprintError(`${exitStatusText(code, signal)}: Segmentation fault`);
    // Ordinary exit codes keep their group (numbers are normalised), so alerts open across an upgrade keep theirs.
    expect(fingerprintError(exitStatusText(1, null))).toBe(fingerprintError('exited with code 1'));
    expect(fingerprintError(exitStatusText(2, null))).toBe(fingerprintError(exitStatusText(1, null)));
    // The same signal is one group run after run; different signals, and a signal against an exit code, are not.
    expect(group(139, null)).toBe(group(139, null));
    expect(group(139, null)).not.toBe(group(137, null));
    expect(group(139, null)).not.toBe(group(1, null));
    expect(group(null, 'SIGSEGV')).not.toBe(group(null, 'SIGKILL'));
  });
});
