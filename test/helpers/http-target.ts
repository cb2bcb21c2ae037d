import { createServer, type IncomingMessage, type Server } from 'node:http';

/** What the launch target received: method, headers and the raw body (signatures are over the raw bytes). */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Answer {
  status: number;
  body?: string;
  delayMs?: number;
  headers?: Record<string, string>;
}

export type Responder = (req: ReceivedRequest) => Answer | Promise<Answer>;

/**
 * A local HTTP server standing in for a system the HTTP launcher calls. Each
 * request is recorded and answered by the current responder.
 */
export async function startHttpTarget(respond: Responder = () => ({ status: 200 })) {
  const received: ReceivedRequest[] = [];
  let responder = respond;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      const answer = await responder(r);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    respondWith(next: Responder) {
      responder = next;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
