import { describe, expect, it } from 'vitest';
import { launchAnswerError } from '../../src/domain/launch-answer.js';

describe("an http launch's failed answer, as its run's error", () => {
  const url = 'http://jobs.internal:8080/run';

  it('a redirect says where it points (absolute; no query, fragment or credentials) and that it was not followed', () => {
    expect(launchAnswerError(308, '', 'https://u:p@jobs.internal/run?token=s3cret#top', url)).toBe(
      'HTTP 308: redirect to https://jobs.internal/run not followed (launchers never follow redirects: set the url to where it points)',
    );
    expect(launchAnswerError(302, '', '/login', url)).toMatch(/^HTTP 302: redirect to http:\/\/jobs\.internal:8080\/login not followed/);
    expect(launchAnswerError(302, '', 'http://[bad', url)).toMatch(/^HTTP 302: redirect to an unreadable location not followed/);
    // A 3xx without a Location is any other answer.
    expect(launchAnswerError(304, 'not modified\n', undefined, url)).toBe('HTTP 304: not modified');
  });

  it('anything else: the status and the first readable line of the answer, cut to 300 characters', () => {
    expect(launchAnswerError(500, '\n\n  upstream exploded\nstack…', undefined, url)).toBe('HTTP 500: upstream exploded');
    expect(launchAnswerError(404, '', undefined, url)).toBe('HTTP 404');
    expect(launchAnswerError(400, 'x'.repeat(1000), undefined, url)).toBe(`HTTP 400: ${'x'.repeat(300)}`);
  });

  it("an HTML error page (a proxy's 502) gives its text, not its first tag", () => {
    const nginx = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';
    expect(launchAnswerError(502, nginx, undefined, url)).toBe('HTTP 502: 502 Bad Gateway');
    expect(launchAnswerError(503, '<!DOCTYPE html>\n<html><body><p>Service &amp; API down</p></body></html>', undefined, url)).toBe('HTTP 503: Service & API down');
    // Text that merely holds angle brackets is not HTML.
    expect(launchAnswerError(400, 'expected <int>, got <str>\n', undefined, url)).toBe('HTTP 400: expected <int>, got <str>');
  });
});
