/**
 * A ping's query parameters, checked. Pure.
 *
 * Each is single-valued: `?rid=a&rid=b` arrives as a list, and taking it as
 * "no rid" would pair the end with the wrong start. A repeated one is refused,
 * naming it; parameters a ping does not know are ignored (as Healthchecks does).
 */

const RID = /^[A-Za-z0-9._:-]{1,100}$/;

export type PingParameters = { ok: true; rid?: string } | { ok: false; problem: string };

export function pingParameters(query: Record<string, unknown>): PingParameters {
  const rid = query.rid;
  if (rid === undefined) return { ok: true };
  if (typeof rid !== 'string') return { ok: false, problem: 'rid: give it once (it was repeated)' };
  if (!RID.test(rid)) return { ok: false, problem: 'rid: use up to 100 letters, digits, dot, dash, underscore or colon' };
  return { ok: true, rid };
}

/** What a ping reports: its start, its end (success, failure, or an exit code 0-255). */
export type PingSignal = { kind: 'start' } | { kind: 'success' } | { kind: 'fail' } | { kind: 'exit'; code: number };

export type PingSignalRead = { ok: true; signal: PingSignal } | { ok: false; problem: string };

const FORMS = 'unknown ping: use /start, /fail, or an exit code 0-255';

/**
 * The suffix of `/ping/<key>[/<suffix>]`, read. Refused, with the reason, and
 * nothing recorded:
 * - an exit code outside 0-255 (Healthchecks' range too: a process's exit
 *   status is one byte, so `$?` never leaves it). Read modulo 256 as the
 *   kernel does, `/256` would be a success; taken as "failed" it would be a
 *   code the job never had. A wrapper that sends such a number has a bug to
 *   see now, not a run's state to guess;
 * - `/log`, which Healthchecks has (a message kept beside the check, no
 *   state change): a run here has one log excerpt, written by its end, and a
 *   message with no run of its own has nowhere to go that is neither a run
 *   nor an alert's thread. The output belongs in the end ping's body.
 */
export function pingSignal(raw: string | undefined): PingSignalRead {
  if (raw === undefined) return { ok: true, signal: { kind: 'success' } };
  if (raw === 'start') return { ok: true, signal: { kind: 'start' } };
  if (raw === 'fail') return { ok: true, signal: { kind: 'fail' } };
  if (/^\d{1,3}$/.test(raw) && Number(raw) <= 255) return { ok: true, signal: { kind: 'exit', code: Number(raw) } };
  if (/^-?\d+$/.test(raw)) {
    const shown = raw.length > 24 ? `${raw.slice(0, 24)}…` : raw;
    return { ok: false, problem: `exit code ${shown} is out of range: use 0-255, as a shell's $? is; nothing was recorded` };
  }
  if (raw === 'log') {
    return {
      ok: false,
      problem:
        '/log is not supported: a run here keeps one log excerpt, written by its end, and a message between start and end has no place of its own; send the output as the body of the end ping (/fail, /<exit code>, or none), which keeps its last 100 KB; nothing was recorded',
    };
  }
  return { ok: false, problem: FORMS };
}
