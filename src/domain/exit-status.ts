/**
 * How a command ended, in the words an operator on call reads: an exit code
 * as such, a signal by its name. A command killed by a signal is seen two
 * ways: directly (the shell exec'd it, or the shell itself was killed: Node
 * gives the signal's name) or through the shell, which exits with 128 + N
 * when the last command it ran died of signal N (`$?` in a crontab ping
 * line too). Both name the signal; the second keeps the code it was given.
 * Ordinary exit codes keep their long-standing text, so the error groups of
 * alerts already open do not change. Pure.
 */

/**
 * Signals whose numbers POSIX systems share (Linux, macOS and the BSDs alike):
 * a pinged exit code comes from a host the bot does not know. Others are named
 * by number, which is never wrong.
 */
const PORTABLE_SIGNALS: Readonly<Record<number, string>> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  5: 'SIGTRAP',
  6: 'SIGABRT',
  8: 'SIGFPE',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
};

/** Highest signal number a shell's 128 + N is read as (the standard signals; above, a program's own code is likelier). */
const MAX_SIGNAL = 31;

/** The signal a shell's exit code stands for (128 + N), if it stands for one. */
export function signalOfShellExit(code: number): string | undefined {
  const n = code - 128;
  if (!Number.isInteger(n) || n < 1 || n > MAX_SIGNAL) return undefined;
  return PORTABLE_SIGNALS[n] ?? `signal ${n}`;
}

/**
 * A failed command's status: `exited with code 3`, `killed by SIGSEGV`
 * (a signal Node reports) or `killed by SIGSEGV (exit code 139)` (the
 * shell's 128 + N). `code` and `signal` as Node's `exit` event gives them.
 */
export function exitStatusText(code: number | null, signal: string | null): string {
  if (code === null) return signal ? `killed by ${signal}` : 'ended without an exit code';
  const shellSignal = signalOfShellExit(code);
  return shellSignal ? `killed by ${shellSignal} (exit code ${code})` : `exited with code ${code}`;
}
