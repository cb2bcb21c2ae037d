import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this request was answered with. */
  status: number;
}

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Read the whole request, then cut the connection without answering. */
  drop?: boolean;
  /** Answer only once this settles (a slow receiver); the request is listed, with status 0, as soon as it arrives. */
  after?: Promise<unknown>;
  /** After `body`, keep streaming 64 KiB chunks of it until the client goes away (an answer without end). */
  endless?: boolean;
}

/**
 * A loopback HTTP receiver (a customer's webhook endpoint, or PagerDuty's
 * Events API) answering from a script, then `fallback` once the script is spent.
 */
export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  private script: ScriptedAnswer[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly fallback: ScriptedAnswer,
  ) {}

  static async start(fallback: ScriptedAnswer = { status: 200, body: 'ok' }): Promise<HttpReceiver> {
    let receiver: HttpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const answer = receiver!.script.shift() ?? receiver!.fallback;
        const received: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 0 };
        receiver!.requests.push(received);
        await answer.after;
        received.status = answer.drop ? 0 : answer.status;
        if (answer.drop) {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
        if (answer.endless) {
          const chunk = Buffer.alloc(64 * 1024, answer.body || 'x');
          const more = () => {
            while (!res.destroyed && res.write(chunk));
            if (!res.destroyed) res.once('drain', more);
          };
          res.on('close', () => res.removeAllListeners('drain'));
          more();
          return;
        }
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new HttpReceiver(server, `http://127.0.0.1:${port}`, fallback);
    return receiver;
  }

  answer(...answers: ScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  /** Drops the answers not given yet and forgets the requests seen. */
  reset(): void {
    this.script.length = 0;
    this.requests.length = 0;
  }

  /** Requests that were answered 2xx: what the receiver acted on. */
  accepted(): ReceivedRequest[] {
    return this.requests.filter((r) => r.status >= 200 && r.status < 300);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
