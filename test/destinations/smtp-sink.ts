import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it (DATA complete). */
export interface ReceivedMail {
  raw: string;
  headers: Map<string, string>;
  text: string;
  html: string;
  envelopeTo: string[];
  /** False when the sink dropped the connection instead of answering 250. */
  acknowledged: boolean;
}

/**
 * A real SMTP server on loopback (smtp-server), recording every message whose
 * DATA it received. `dropAfterData(n)` makes the next n messages vanish the
 * way a crashed relay does: the whole message arrives, then the connection is
 * cut before the 250 reply, so the sender cannot know it got through.
 * `mailbox()` is what a reader would see from a receiver that, like common
 * mail stores, keeps one copy per Message-ID.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  private drops = 0;
  private rejects: number[] = [];
  private holds = 0;
  /** RCPT TO commands left unanswered (`holdRecipient`), in arrival order. */
  heldRecipients = 0;

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
  ) {}

  static async start(): Promise<SmtpSink> {
    let sink: SmtpSink | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(_address, _session, callback) {
        // A server too slow to answer: the command is never answered (the sender gives up and closes).
        if (sink!.holds > 0) {
          sink!.holds--;
          sink!.heldRecipients++;
          return;
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => sink!.onMessage(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo.map((r) => r.address), session.id, callback));
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    sink = new SmtpSink(server, `smtp://127.0.0.1:${port}`);
    return sink;
  }

  dropAfterData(times = 1): void {
    this.drops += times;
  }

  /** The next `times` RCPT TO commands are never answered, as by a server stalling mid-conversation. */
  holdRecipient(times = 1): void {
    this.holds += times;
  }

  /** The next messages are answered with these SMTP codes (e.g. 451, 550). */
  rejectWith(...codes: number[]): void {
    this.rejects.push(...codes);
  }

  mailbox(): ReceivedMail[] {
    const byId = new Map<string, ReceivedMail>();
    for (const m of this.received) if (!byId.has(m.headers.get('message-id')!)) byId.set(m.headers.get('message-id')!, m);
    return [...byId.values()];
  }

  private onMessage(raw: string, to: string[], sessionId: string, callback: (err?: Error | null) => void): void {
    const reject = this.rejects.shift();
    if (reject) {
      const err = Object.assign(new Error(`rejected by test (${reject})`), { responseCode: reject });
      callback(err);
      return;
    }
    const drop = this.drops > 0;
    if (drop) this.drops--;
    this.received.push({ ...parseMail(raw), envelopeTo: to, acknowledged: !drop });
    if (!drop) {
      callback();
      return;
    }
    for (const c of this.server.connections) {
      if (c.id === sessionId) (c as unknown as { _socket: { destroy(): void } })._socket.destroy();
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Just enough MIME for these tests: unfolded headers, and the text and HTML parts decoded. */
export function parseMail(raw: string): Pick<ReceivedMail, 'raw' | 'headers' | 'text' | 'html'> {
  const { headers, body } = splitHeaders(raw);
  const parts: { type: string; body: string }[] = [];
  const walk = (h: Map<string, string>, b: string) => {
    const type = h.get('content-type') ?? 'text/plain';
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (boundary) {
      for (const chunk of b.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith('--')) break;
        const inner = splitHeaders(chunk.replace(/^\r?\n/, ''));
        walk(inner.headers, inner.body);
      }
      return;
    }
    const encoding = (h.get('content-transfer-encoding') ?? '7bit').toLowerCase();
    const decoded = encoding === 'quoted-printable' ? decodeQp(b) : encoding === 'base64' ? Buffer.from(b.replace(/\s+/g, ''), 'base64').toString('utf8') : b;
    parts.push({ type: type.split(';')[0]!.trim().toLowerCase(), body: decoded });
  };
  walk(headers, body);
  return {
    raw,
    headers,
    text: parts.find((p) => p.type === 'text/plain')?.body ?? '',
    html: parts.find((p) => p.type === 'text/html')?.body ?? '',
  };
}

function splitHeaders(raw: string): { headers: Map<string, string>; body: string } {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end < 0 ? raw : raw.slice(0, end);
  const body = end < 0 ? '' : raw.slice(end).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), decodeWords(line.slice(i + 1).trim()));
  }
  return { headers, body };
}

function decodeQp(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => `%${h}`);
  try {
    return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
  } catch {
    return bytes;
  }
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / =?UTF-8?B?…?=) in headers such as Subject. */
function decodeWords(s: string): string {
  return s.replace(/=\?utf-8\?([qb])\?([^?]*)\?=\s*/gi, (_, enc: string, text: string) =>
    enc.toLowerCase() === 'b' ? Buffer.from(text, 'base64').toString('utf8') : decodeQp(text.replace(/_/g, ' ')),
  );
}
