import { firstReadableLine } from './error-line.js';
import { retryAfterMs } from './retry-after.js';
import { cutText } from './text.js';
import { PERMANENT } from './permanent-error.js';
import { isShellCannotRun } from './spawn-failure.js';

/**
 * The error of an http launch the target answered with anything but a 2xx,
 * in words an operator acts on. A redirect is never followed (a launch is a
 * signed POST: following it would resend it somewhere the launcher was not
 * set to reach, and a 301/302 turns the POST into a GET), so it says where
 * it points, without the query (a signed link or a login's state is no
 * error text), and what to do. Anything else: the status and the first
 * readable line of the answer (of an HTML error page, such as a proxy's
 * 502, its text rather than its first tag). A permanent answer
 * (`launchAnswerKind`) ends with `permanent: not retried`, which is what
 * tells the retry engine (`isPermanentLaunchError`). Pure.
 */

const REDIRECT_HINT = 'launchers never follow redirects: set the url to where it points';

export function launchAnswerError(status: number, body: string, location: string | undefined, url: string): string {
  const permanent = launchAnswerKind(status) === 'permanent';
  if (status >= 300 && status < 400 && location) {
    return `HTTP ${status}: redirect to ${redirectTarget(location, url)} not followed (${REDIRECT_HINT}${permanent ? `; ${PERMANENT}` : ''})`;
  }
  const line = firstReadableLine(isHtml(body) ? htmlText(body) : body, 300);
  const error = line ? `HTTP ${status}: ${line}` : `HTTP ${status}`;
  return permanent ? `${error} (${PERMANENT})` : error;
}

/**
 * What an http launch's answer means for its run. `success`: a 2xx (the
 * run's success in `sync` mode, its acceptance in `callback`). `permanent`:
 * the target refused the request as it stands (a 3xx, which is never
 * followed, and every 4xx but the three below: 400, 401, 403, 404, 405,
 * 409, 410, 422…): the same signed request sent again gets the same answer,
 * so the run fails at once and its tick gets no retry. `transient`: 408
 * (request timeout), 425 (too early), 429 (rate limited), any 5xx, and
 * anything else: a later try may succeed, within the retry budget.
 */
export type LaunchAnswerKind = 'success' | 'permanent' | 'transient';

const TRANSIENT_4XX = new Set([408, 425, 429]);

export function launchAnswerKind(status: number): LaunchAnswerKind {
  if (status >= 200 && status < 300) return 'success';
  if (status >= 300 && status < 500 && !TRANSIENT_4XX.has(status)) return 'permanent';
  return 'transient';
}

/**
 * Whether a run's error is a permanent launch answer's (as worded by
 * `launchAnswerError`), a refusal before sending or a command that cannot
 * start (`launchRefusalError`), or a command its shell cannot find or run
 * (`commandExitError` in spawn-failure.ts):
 * the retry engine then starts no further attempt of its tick. Only the
 * launcher's own wording counts: a job's output that mentions an HTTP 404 is
 * its own failure, retried as usual.
 */
export function isPermanentLaunchError(error: string | null | undefined): boolean {
  return permanentLaunchReason(error) !== undefined;
}

/**
 * Why a run's error ends its tick without a retry, for the tick's note
 * (`failed on attempt 2; not retried (refused before sending)`): the target's
 * permanent answer, a refusal before anything was sent, a command that cannot
 * be started or that its shell cannot find or run; undefined for any
 * other error, retried per the budget.
 */
export function permanentLaunchReason(error: string | null | undefined): PermanentLaunchReason | undefined {
  if (!error || !error.endsWith(`${PERMANENT})`)) return undefined;
  if (/^HTTP [34]\d\d\b/.test(error)) return 'a permanent answer';
  if (error.startsWith(REFUSED)) return 'refused before sending';
  if (error.startsWith(CANNOT_START)) return 'cannot be started';
  return isShellCannotRun(error) ? 'the shell cannot run the command' : undefined;
}

export type PermanentLaunchReason = 'a permanent answer' | 'refused before sending' | 'cannot be started' | 'the shell cannot run the command';

/**
 * Why an http launch was refused before anything was sent: the address
 * policy (a tenant's launcher to a host not on the operator's allow-list; an
 * address, literal or resolved, that is not public and not listed), or no
 * key to sign it with. Every one is permanent, like a 4xx answer: retried at
 * once (the budget's retries follow within seconds), the same configuration
 * refuses the same request again, so the run fails at once and its tick gets
 * no retry; the next tick looks again.
 *
 * A name that resolves to a non-public address is refused the same way, for
 * that tick. A DNS answer can change, but not within the seconds a tick's
 * retries take (its TTL holds it), and a name that points inside is either a
 * record to fix or an attempt to reach inside (DNS rebinding) that retries
 * would only give more tries; every tick resolves the name afresh, so a record
 * put right is followed from the next tick on. A name that does not resolve
 * at all (NXDOMAIN, a resolver timing out) is a network fault, not a
 * refusal: transient, retried. Only the host is named, never the URL (its
 * query or user part may hold a credential).
 */
export type LaunchRefusal =
  | { kind: 'host_not_allowed'; host: string; tenant: string }
  | { kind: 'address_not_allowed'; host: string; address: string | undefined }
  | { kind: 'no_signing_secret'; reason: string }
  | { kind: 'cannot_start'; reason: string };

const REFUSED = 'launch refused: ';
const CANNOT_START = 'launch failed: ';

/**
 * `cannot_start`: a command launcher's command that cannot be started as
 * configured (src/domain/spawn-failure.ts: its working directory, the
 * shell; an unknown COMMAND_USER), worded `launch failed: … (permanent: not
 * retried)` like the transient `launch failed: …`, which has no such end.
 */
export function launchRefusalError(refusal: LaunchRefusal): string {
  if (refusal.kind === 'cannot_start') return `${CANNOT_START}${refusal.reason} (${PERMANENT})`;
  return `${REFUSED}${refusalText(refusal)} (${PERMANENT})`;
}

function refusalText(refusal: Exclude<LaunchRefusal, { kind: 'cannot_start' }>): string {
  switch (refusal.kind) {
    case 'host_not_allowed':
      return `host ${refusal.host} is not on the operator's allow-list for tenant ${refusal.tenant}`;
    case 'address_not_allowed':
      // An IP literal is its own address; a name says what it resolved to.
      return refusal.address === refusal.host
        ? `${refusal.host} is a non-public address the operator has not allowed`
        : `${refusal.host} resolves to ${refusal.address ?? 'nothing'}, a non-public address the operator has not allowed`;
    case 'no_signing_secret':
      return refusal.reason;
  }
}

/** The most times one attempt sends its request again after a transient answer's Retry-After. */
export const MAX_RESENDS = 3;

/**
 * How long to wait before sending the launch request again within the same
 * attempt, or undefined to end the attempt with this answer. Only a
 * transient answer that says when to come back (`Retry-After`, read by
 * `retryAfterMs`: seconds or an HTTP date, at most 10 minutes) is sent
 * again, and only when that is before the run's deadline and fewer than
 * MAX_RESENDS re-sends were made. Without a Retry-After the attempt fails
 * and the tick's retry budget decides, as for a command.
 */
export function resendDelayMs(status: number, retryAfter: string | null | undefined, now: Date, deadline: Date, resends: number): number | undefined {
  if (launchAnswerKind(status) !== 'transient' || !retryAfter || resends >= MAX_RESENDS) return undefined;
  const wait = retryAfterMs(retryAfter, now);
  return now.getTime() + wait < deadline.getTime() ? wait : undefined;
}

/** An HTML page (a proxy's or a framework's error page), not text that merely holds angle brackets. */
function isHtml(body: string): boolean {
  return /^\s*<(?:!doctype\s+html|html|head|body|title|h1)\b/i.test(body);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** The text of an HTML page, line by line: scripts, styles and tags gone, the common entities read. */
function htmlText(body: string): string {
  return body
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, name: string) => ENTITIES[name]!);
}

/** Where a Location points, made absolute against the launcher's url, without query or fragment. */
function redirectTarget(location: string, url: string): string {
  try {
    const target = new URL(location, url);
    target.search = '';
    target.hash = '';
    target.username = '';
    target.password = '';
    return cutText(target.href, 300);
  } catch {
    return 'an unreadable location';
  }
}
