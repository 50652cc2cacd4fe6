import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Quirks } from '../quirks.js';
import { badRequest } from './errors.js';

/** A handler's answer: a string body is sent with content-length, an iterable one streamed (chunked). */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer | Iterable<string>;
}

/** What a /v2 handler gets: the path's id segments as written, query, parsed body and write stamp. */
export interface RequestContext {
  readonly method: string;
  readonly ids: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly accountId: number;
  readonly now: Date;
  /** The quirks in force when the request arrived. */
  readonly quirks: Quirks;
}

export type Handler = (ctx: RequestContext) => Reply;

/** A JSON reply. */
export function json(status: number, value: unknown): Reply {
  return { status, body: JSON.stringify(value) };
}

/** 204 with an empty body. */
export const NO_CONTENT: Reply = { status: 204 };

const MAX_BODY = 1024 * 1024;

/** Reads and parses a JSON request body; undefined when empty; 400 when not JSON or above 1 MiB. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw badRequest('The request body is larger than 1 MiB.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
}

/** Materialises a reply body (for truncation, where content-length must be the full length). */
export function bodyBuffer(reply: Reply): Buffer {
  const b = reply.body;
  if (b === undefined) return Buffer.alloc(0);
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  if (Buffer.isBuffer(b)) return b;
  return Buffer.from([...b].join(''), 'utf8');
}

/**
 * Starts a streamed body: its first chunk is made now (for a report, that is the sort and the first
 * 64 KB), and a body of at most two chunks becomes one string. The reply then sends without more work
 * for a small body; a big one goes on streaming the rest.
 */
export function primeBody(reply: Reply): Reply {
  const b = reply.body;
  if (b === undefined || typeof b === 'string' || Buffer.isBuffer(b)) return reply;
  const chunks = b[Symbol.iterator]();
  const first = chunks.next();
  if (first.done === true) return { ...reply, body: '' };
  const second = chunks.next();
  if (second.done === true) return { ...reply, body: first.value };
  return {
    ...reply,
    body: (function* () {
      yield first.value;
      yield second.value;
      yield* { [Symbol.iterator]: () => chunks };
    })(),
  };
}

/**
 * Sends a reply. A body of at most two chunks goes out whole with content-length, like most servers
 * answer small reports; a longer one is written chunk by chunk, waiting on 'drain' (backpressure).
 */
export async function sendReply(res: ServerResponse, given: Reply): Promise<void> {
  const reply = primeBody(given);
  const headers: Record<string, string | number> = { ...reply.headers };
  const b = reply.body;
  if (b !== undefined && reply.status !== 204 && headers['content-type'] === undefined)
    headers['content-type'] = 'application/json; charset=utf-8';
  if (b === undefined || reply.status === 204) {
    res.writeHead(reply.status, { ...headers, 'content-length': 0 });
    res.end();
    return;
  }
  if (typeof b === 'string' || Buffer.isBuffer(b)) {
    res.writeHead(reply.status, { ...headers, 'content-length': Buffer.byteLength(b) });
    res.end(b);
    return;
  }
  res.writeHead(reply.status, headers);
  for (const chunk of b) {
    if (res.destroyed) return;
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
  res.end();
}
