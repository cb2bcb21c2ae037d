import { PERMANENT } from './permanent-error.js';

/**
 * Why a command launcher's command could not be started, in words an
 * operator can act on, and whether trying again could help. Node reports a
 * missing working directory as `spawn /bin/sh ENOENT`, which reads as "the
 * shell is missing"; the launcher looks at the directory when a spawn fails
 * and this names it; with the directory fine, the ENOENT is the shell's own
 * (a distroless image).
 *
 * Permanent (the run fails at once and its tick gets no retry, like an http
 * launch refused before sending: src/domain/launch-answer.ts): a working
 * directory that does not exist, is not a directory or is not accessible, and
 * a missing /bin/sh. A tick's retries come within seconds and would meet the
 * same filesystem; the next tick tries again, so a directory mounted or a path
 * put right is followed from then on. Transient: whatever says the machine is
 * short of something for now (EAGAIN: too many processes, EMFILE/ENFILE: too
 * many open files, ENOMEM), an ENOENT whose directory could not be looked at,
 * and anything not known here: retried per the budget. Only the path and
 * Node's error are named, never the command's environment.
 * Pure: what the directory is comes in as `cwdState`.
 */

export type CwdState = 'directory' | 'missing' | 'not_a_directory' | 'unknown';

export interface SpawnFailure {
  error: string;
  /** The same spawn would fail the same way: no retry. */
  permanent: boolean;
}

export function spawnFailure(error: { code?: string; message: string }, cwd: string | undefined, cwdState: CwdState | undefined): SpawnFailure {
  if (cwd !== undefined) {
    if (cwdState === 'missing') return { error: `working directory ${cwd} does not exist (${error.message})`, permanent: true };
    if (cwdState === 'not_a_directory') return { error: `working directory ${cwd} is not a directory (${error.message})`, permanent: true };
    if (error.code === 'EACCES') return { error: `working directory ${cwd} or /bin/sh is not accessible to the command's user (${error.message})`, permanent: true };
  }
  if (error.code === 'EACCES') return { error: `/bin/sh is not executable by the command's user (${error.message})`, permanent: true };
  // The directory is there (or none was given): what is missing is the shell itself (a distroless image).
  if (error.code === 'ENOENT' && cwdState !== 'unknown') {
    return { error: `/bin/sh not found: the command launcher runs every command with /bin/sh -c; give the image a POSIX shell (${error.message})`, permanent: true };
  }
  return { error: error.message, permanent: false };
}

/**
 * The error of a command that exited non-zero, from its exit status and the
 * last line it printed. When the shell that runs it (/bin/sh -c) could not
 * find the command (127: `/bin/sh: 1: etl-job: not found`) or run it (126:
 * `/bin/sh: 1: ./etl: Permission denied`) and said so last, the error ends
 * with `(permanent: not retried)`: a retry seconds later finds the same
 * PATH and files, so the tick gets none (`permanentLaunchReason`). The words
 * must be the shell's own, as dash, bash and busybox word them, prefixed
 * with /bin/sh: a job whose own script exits 127 from a nested shell (`sh:`,
 * `bash:`) fails as usual, retried per the budget.
 */
export function commandExitError(status: string, code: number | null, line: string | undefined): string {
  if (!line) return status;
  return shellCouldNotRun(code, line) ? `${status}: ${line} (${PERMANENT})` : `${status}: ${line}`;
}

const SHELL_NOT_FOUND = /^\/bin\/sh: (?:(?:line )?\d+: )?.+: (?:command )?not found$/;
const SHELL_CANNOT_EXECUTE = /^\/bin\/sh: (?:(?:line )?\d+: )?.+: (?:Permission denied|Is a directory|cannot execute.*|Exec format error)$/;

function shellCouldNotRun(code: number | null, line: string): boolean {
  return (code === 127 && SHELL_NOT_FOUND.test(line)) || (code === 126 && SHELL_CANNOT_EXECUTE.test(line));
}

/** Whether a run's error is `commandExitError`'s permanent one (the shell could not find or run the command). */
export function isShellCannotRun(error: string): boolean {
  const suffix = ` (${PERMANENT})`;
  const match = /^exited with code (12[67]): (.*)$/s.exec(error);
  if (!match || !match[2]!.endsWith(suffix)) return false;
  return shellCouldNotRun(Number(match[1]), match[2]!.slice(0, -suffix.length));
}
