/**
 * The words that end a launch error the same launch would meet again: an http
 * target's permanent answer, a launch refused before sending, a command that
 * cannot be started or that its shell cannot find (src/domain/launch-answer.ts,
 * spawn-failure.ts). The retry engine reads them (`permanentLaunchReason`) and
 * starts no further attempt of the tick. Pure.
 */
export const PERMANENT = 'permanent: not retried';
