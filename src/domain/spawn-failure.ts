/**
 * Why a command launcher's command could not be started, in words an
 * operator can act on. Node reports a missing working directory as
 * `spawn /bin/sh ENOENT`, which reads as "the shell is missing"; the
 * launcher looks at the directory when a spawn fails and this names it;
 * with the directory fine, the ENOENT is the shell's own (a distroless image).
 * Pure: what the directory is comes in as `cwdState`.
 */

export type CwdState = 'directory' | 'missing' | 'not_a_directory' | 'unknown';

export function spawnFailure(error: { code?: string; message: string }, cwd: string | undefined, cwdState: CwdState | undefined): string {
  if (cwd !== undefined) {
    if (cwdState === 'missing') return `working directory ${cwd} does not exist (${error.message})`;
    if (cwdState === 'not_a_directory') return `working directory ${cwd} is not a directory (${error.message})`;
    if (error.code === 'EACCES') return `working directory ${cwd} or /bin/sh is not accessible to the command's user (${error.message})`;
  }
  // The directory is there (or none was given): what is missing is the shell itself (a distroless image).
  if (error.code === 'ENOENT' && cwdState !== 'unknown') return `/bin/sh not found: the command launcher runs every command with /bin/sh -c; give the image a POSIX shell (${error.message})`;
  return error.message;
}
