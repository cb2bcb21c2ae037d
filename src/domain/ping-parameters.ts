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
