import { firstReadableLine } from './error-line.js';
import { cutText } from './text.js';

/**
 * The error of an http launch the target answered with anything but a 2xx,
 * in words an operator acts on. A redirect is never followed (a launch is a
 * signed POST: following it would resend it somewhere the launcher was not
 * set to reach, and a 301/302 turns the POST into a GET), so it says where
 * it points, without the query (a signed link or a login's state is no
 * error text), and what to do. Anything else: the status and the first
 * readable line of the answer. Pure.
 */

const REDIRECT_HINT = 'launchers never follow redirects: set the url to where it points';

export function launchAnswerError(status: number, body: string, location: string | undefined, url: string): string {
  if (status >= 300 && status < 400 && location) return `HTTP ${status}: redirect to ${redirectTarget(location, url)} not followed (${REDIRECT_HINT})`;
  const line = firstReadableLine(body, 300);
  return line ? `HTTP ${status}: ${line}` : `HTTP ${status}`;
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
