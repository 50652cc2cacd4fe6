// Talks to a real emulator over real HTTP (undici, never the project's API client).
import { request } from 'undici';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../../src/emulator/index.js';

export const NOW = new Date('2025-06-15T12:00:00Z');

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** An emulator on a free port with a fixed clock (override anything). */
export function start(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ now: () => NOW, ...options });
}

/** One request; `key` null sends no credential; `auth` picks the header form. */
export async function call(
  emu: RunningEmulator,
  method: string,
  path: string,
  options: { body?: unknown; key?: string | null; auth?: 'bearer' | 'x-api-key'; rawBody?: string } = {},
): Promise<Answer> {
  const key = options.key === undefined ? 'demo-key' : options.key;
  const headers: Record<string, string> = {};
  if (key !== null) {
    if (options.auth === 'x-api-key') headers['x-api-key'] = key;
    else headers.authorization = `Bearer ${key}`;
  }
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await request(`${emu.url}${path}`, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Asserts-friendly shape of an error body. */
export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  field?: string;
}
