import { describe, expect, it } from 'vitest';
import { isPermanentLaunchError, launchAnswerError, launchAnswerKind, launchRefusalError, MAX_RESENDS, permanentLaunchReason, resendDelayMs } from '../../src/domain/launch-answer.js';

describe("an http launch's failed answer, as its run's error", () => {
  const url = 'http://jobs.internal:8080/run';

  it('a redirect says where it points (absolute; no query, fragment or credentials) and that it was not followed', () => {
    expect(launchAnswerError(308, '', 'https://u:p@jobs.internal/run?token=s3cret#top', url)).toBe(
      'HTTP 308: redirect to https://jobs.internal/run not followed (launchers never follow redirects: set the url to where it points; permanent: not retried)',
    );
    expect(launchAnswerError(302, '', '/login', url)).toMatch(/^HTTP 302: redirect to http:\/\/jobs\.internal:8080\/login not followed/);
    expect(launchAnswerError(302, '', 'http://[bad', url)).toMatch(/^HTTP 302: redirect to an unreadable location not followed/);
    // A 3xx without a Location is any other answer.
    expect(launchAnswerError(304, 'not modified\n', undefined, url)).toBe('HTTP 304: not modified (permanent: not retried)');
  });

  it('anything else: the status and the first readable line of the answer, cut to 300 characters', () => {
    expect(launchAnswerError(500, '\n\n  upstream exploded\nstack…', undefined, url)).toBe('HTTP 500: upstream exploded');
    expect(launchAnswerError(404, '', undefined, url)).toBe('HTTP 404 (permanent: not retried)');
    expect(launchAnswerError(400, 'x'.repeat(1000), undefined, url)).toBe(`HTTP 400: ${'x'.repeat(300)} (permanent: not retried)`);
    expect(launchAnswerError(502, '', undefined, url)).toBe('HTTP 502');
  });

  it("an HTML error page (a proxy's 502) gives its text, not its first tag", () => {
    const nginx = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';
    expect(launchAnswerError(502, nginx, undefined, url)).toBe('HTTP 502: 502 Bad Gateway');
    expect(launchAnswerError(503, '<!DOCTYPE html>\n<html><body><p>Service &amp; API down</p></body></html>', undefined, url)).toBe('HTTP 503: Service & API down');
    // Text that merely holds angle brackets is not HTML.
    expect(launchAnswerError(400, 'expected <int>, got <str>\n', undefined, url)).toBe('HTTP 400: expected <int>, got <str> (permanent: not retried)');
  });
});

describe('whether a launch answer is retried', () => {
  const url = 'http://jobs.internal:8080/run';
  const now = new Date('2026-03-10T02:00:00Z');
  const deadline = new Date('2026-03-10T02:10:00Z');

  it.each([
    [200, 'success'], [202, 'success'], [204, 'success'],
    [301, 'permanent'], [304, 'permanent'], [308, 'permanent'],
    [400, 'permanent'], [401, 'permanent'], [403, 'permanent'], [404, 'permanent'], [405, 'permanent'], [409, 'permanent'],
    [410, 'permanent'], [413, 'permanent'], [415, 'permanent'], [422, 'permanent'], [451, 'permanent'],
    [408, 'transient'], [425, 'transient'], [429, 'transient'],
    [500, 'transient'], [502, 'transient'], [503, 'transient'], [504, 'transient'], [599, 'transient'],
  ] as const)('HTTP %i is %s', (status, kind) => {
    expect(launchAnswerKind(status)).toBe(kind);
  });

  it('a permanent answer says so in its error, and only such an error stops the retries', () => {
    const refused = launchAnswerError(404, 'no such job: nightly\n', undefined, url);
    expect(refused).toBe('HTTP 404: no such job: nightly (permanent: not retried)');
    expect(isPermanentLaunchError(refused)).toBe(true);
    const redirect = launchAnswerError(301, '', 'https://jobs.internal/v2', url);
    expect(redirect).toBe('HTTP 301: redirect to https://jobs.internal/v2 not followed (launchers never follow redirects: set the url to where it points; permanent: not retried)');
    expect(isPermanentLaunchError(redirect)).toBe(true);
    expect(isPermanentLaunchError(launchAnswerError(422, '', undefined, url))).toBe(true);
    for (const status of [408, 425, 429, 500, 503]) expect(isPermanentLaunchError(launchAnswerError(status, 'busy', undefined, url)), String(status)).toBe(false);
    // A job's own words are not the launcher's verdict: an error that merely mentions a 404 is retried.
    for (const error of [null, '', 'exited with code 1: HTTP 404: Not Found', 'HTTP 404: Not Found', 'timed out after 60s', 'request failed: ECONNREFUSED'])
      expect(isPermanentLaunchError(error), String(error)).toBe(false);
  });

  it('a refusal before sending is permanent too, names the host and says why; the note tells it from an answer', () => {
    const host = launchRefusalError({ kind: 'host_not_allowed', host: 'jobs.elsewhere.example', tenant: 'acme' });
    expect(host).toBe("launch refused: host jobs.elsewhere.example is not on the operator's allow-list for tenant acme (permanent: not retried)");
    const resolved = launchRefusalError({ kind: 'address_not_allowed', host: 'jobs.internal', address: '10.0.0.7' });
    expect(resolved).toBe('launch refused: jobs.internal resolves to 10.0.0.7, a non-public address the operator has not allowed (permanent: not retried)');
    expect(launchRefusalError({ kind: 'address_not_allowed', host: '169.254.169.254', address: '169.254.169.254' })).toBe(
      'launch refused: 169.254.169.254 is a non-public address the operator has not allowed (permanent: not retried)',
    );
    const secret = launchRefusalError({ kind: 'no_signing_secret', reason: 'no signing secret: set LAUNCHER_SECRET' });
    for (const error of [host, resolved, secret]) {
      expect(isPermanentLaunchError(error), error).toBe(true);
      expect(permanentLaunchReason(error)).toBe('refused before sending');
    }
    expect(permanentLaunchReason(launchAnswerError(404, 'no such job', undefined, url))).toBe('a permanent answer');
    // The launcher's transient failures and a job's own words are not refusals.
    for (const error of ['launch failed: this scheduler-bot replica is shutting down', 'request failed: getaddrinfo ENOTFOUND jobs.internal', 'launch refused: host x (not retried)'])
      expect(permanentLaunchReason(error), error).toBeUndefined();
  });

  it('a transient answer with a Retry-After is sent again after it, when that is before the deadline; never a permanent one', () => {
    expect(resendDelayMs(429, '30', now, deadline, 0)).toBe(30_000);
    expect(resendDelayMs(503, 'Tue, 10 Mar 2026 02:01:00 GMT', now, deadline, 0)).toBe(60_000);
    expect(resendDelayMs(408, '1', now, deadline, 0)).toBe(1_000);
    expect(resendDelayMs(425, '1', now, deadline, 0)).toBe(1_000);
    // Past the run's deadline: this attempt fails now, and the retry budget decides.
    expect(resendDelayMs(429, '600', now, deadline, 0)).toBeUndefined();
    expect(resendDelayMs(429, '599', now, deadline, 0)).toBe(599_000);
    // Without one: no wait of ours is invented inside the attempt.
    expect(resendDelayMs(429, null, now, deadline, 0)).toBeUndefined();
    expect(resendDelayMs(500, null, now, deadline, 0)).toBeUndefined();
    // Permanent answers and successes are never re-sent, whatever they say.
    expect(resendDelayMs(400, '1', now, deadline, 0)).toBeUndefined();
    expect(resendDelayMs(200, '1', now, deadline, 0)).toBeUndefined();
    // At most MAX_RESENDS re-sends in one attempt.
    expect(resendDelayMs(429, '1', now, deadline, MAX_RESENDS - 1)).toBe(1_000);
    expect(resendDelayMs(429, '1', now, deadline, MAX_RESENDS)).toBeUndefined();
  });
});
