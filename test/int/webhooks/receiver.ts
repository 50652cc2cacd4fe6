// A webhook receiver for tests: a real node:http server that records every request's headers and
// raw body bytes, and answers with the status (and headers) a test chooses per request.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly body: { id: string; type: string; [field: string]: unknown };
  /** The status this request was answered with. */
  readonly status: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The requests of one event type, in arrival order. */
  of(type: string): Received[];
  /** Resolves once `count` requests of `type` arrived (rejects after `timeoutMs`). */
  waitFor(type: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A status, or a status with response headers (e.g. Retry-After). */
export type Answer = number | { readonly status: number; readonly headers: Record<string, string> };

/**
 * Starts a receiver; `answer(body, n, request)` gives the answer to a request whose body is `body`
 * and which is the n-th (1-based) of its event type; 200 by default.
 */
export async function startReceiver(
  answer: (
    body: Received['body'],
    n: number,
    request: { headers: IncomingHttpHeaders; raw: Buffer },
  ) => Answer = () => 200,
): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const of = (type: string) => received.filter((r) => r.body.type === type);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8')) as Received['body'];
      const given = answer(body, of(body.type).length + 1, { headers: req.headers, raw });
      const { status, headers } = typeof given === 'number' ? { status: given, headers: {} } : given;
      received.push({ headers: req.headers, raw, body, status });
      res
        .writeHead(status, { 'content-type': 'text/plain', ...headers })
        .end(status < 300 ? 'ok' : `status ${status}`);
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/adops`,
    received,
    of,
    waitFor: (type, count, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (of(type).length < count) return;
          cleanup();
          resolve(of(type));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${of(type).length} of ${count} ${type} deliveries arrived in ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
