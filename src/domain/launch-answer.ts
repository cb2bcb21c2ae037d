import { firstReadableLine } from './error-line.js';
import { cutText } from './text.js';

/**
 * The error of an http launch the target answered with anything but a 2xx,
 * in words an operator acts on. A redirect is never followed (a launch is a
 * signed POST: following it would resend it somewhere the launcher was not
 * set to reach, and a 301/302 turns the POST into a GET), so it says where
 * it points, without the query (a signed link or a login's state is no
 * error text), and what to do. Anything else: the status and the first
 * readable line of the answer (of an HTML error page, such as a proxy's
 * 502, its text rather than its first tag). Pure.
 */

const REDIRECT_HINT = 'launchers never follow redirects: set the url to where it points';

export function launchAnswerError(status: number, body: string, location: string | undefined, url: string): string {
  if (status >= 300 && status < 400 && location) return `HTTP ${status}: redirect to ${redirectTarget(location, url)} not followed (${REDIRECT_HINT})`;
  const line = firstReadableLine(isHtml(body) ? htmlText(body) : body, 300);
  return line ? `HTTP ${status}: ${line}` : `HTTP ${status}`;
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
