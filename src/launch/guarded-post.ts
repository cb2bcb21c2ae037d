import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressAllowed, type AllowList } from '../domain/address-policy.js';

/** A connection refused by the address policy: the run's error says which address and why. */
export class TargetNotAllowedError extends Error {
  constructor(
    readonly host: string,
    /** The address refused (the host itself for an IP literal); undefined when the name resolved to none. */
    readonly address: string | undefined,
  ) {
    super(address === host ? `${host} is a non-public address the operator has not allowed` : `${host} resolves to ${address ?? 'nothing'}, a non-public address the operator has not allowed`);
    this.name = 'TargetNotAllowedError';
  }
}

/**
 * The address check runs inside the socket's own DNS lookup, so the address
 * checked is the address connected to: a name that resolved to a public
 * address when the launcher was set and to 127.0.0.1 now (DNS rebinding)
 * is refused at connect time. Every checked request connects afresh (no
 * agent), so the check runs for each one.
 */
function guardedLookup(list: AllowList): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const all = addresses as unknown as LookupAddress[];
      const refused = all.find((a) => !addressAllowed(a.address, list));
      if (refused || all.length === 0) {
        return callback(new TargetNotAllowedError(hostname, refused?.address), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, all);
      callback(null, all[0]!.address, all[0]!.family);
    });
  };
}

export interface PostAnswer {
  status: number;
  /** At most `limit` bytes of the answer's body. */
  text: string;
  /** Whether the body went on past `limit`. */
  truncated: boolean;
  /** The answer's Location header (a redirect's target), as sent. */
  location?: string;
  /** The answer's Retry-After header, as sent (src/domain/launch-answer.ts resendDelayMs reads it). */
  retryAfter?: string;
}

/**
 * POSTs `body` and reads at most `limit` bytes of the answer. Redirects are
 * never followed (a 3xx is the answer). With `list`, connections go only to
 * addresses the address policy allows (tenant launchers); without, anywhere
 * (the operator's own launchers). `signal` aborts it early. With
 * `statusOnlyIf2xx`, a 2xx answer resolves at its status line, its body unread.
 */
export function guardedPost(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; limit: number; list?: AllowList; signal?: AbortSignal; statusOnlyIf2xx?: boolean },
): Promise<PostAnswer> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // An IP literal is never looked up: check it here.
  if (options.list && isIP(host) && !addressAllowed(host, options.list)) {
    return Promise.reject(new TargetNotAllowedError(host, host));
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostAnswer>((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        // `signal`: the replica stopping (past its grace) drops the request as its timeout does.
        signal: options.signal ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal]) : AbortSignal.timeout(options.timeoutMs),
        // A connection of its own, never a pooled one: the global agent keeps sockets alive by host and port alone, and an
        // operator's launcher (unchecked) may have left one open to the same name resolved to an address a tenant may not reach.
        ...(options.list ? { lookup: guardedLookup(options.list), agent: false } : {}),
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (options.statusOnlyIf2xx && status >= 200 && status < 300) {
          // The status is the whole answer (a callback target accepting): its body is not waited for.
          res.destroy();
          return resolve({ status, text: '', truncated: false });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (c: Buffer) => {
          if (truncated) return;
          chunks.push(c);
          size += c.length;
          if (size >= options.limit) {
            truncated = true;
            res.destroy();
            finish();
          }
        });
        res.on('end', finish);
        res.on('error', (error) => (truncated ? undefined : reject(error)));
        let done = false;
        function finish() {
          if (done) return;
          done = true;
          const text = Buffer.concat(chunks).subarray(0, options.limit).toString('utf8');
          const retryAfter = res.headers['retry-after'];
          resolve({ status, text, truncated, ...(res.headers.location ? { location: res.headers.location } : {}), ...(retryAfter ? { retryAfter } : {}) });
        }
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
