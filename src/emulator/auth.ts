import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ApiError } from './api/errors.js';
import { API_ACCOUNT_ID } from './entities.js';
import type { EmulatorKey, Scope } from './types.js';

/** The documented full-access key, accepted unless disabled. */
export const DEMO_KEY = 'demo-key';

/**
 * The key of a request: `Authorization: Bearer <key>` (scheme case-insensitive) or `x-api-key: <key>`.
 * With `form` set to one of them (the auth quirk), the other header is ignored, as by a server that
 * knows only one form: its key then counts as missing (401).
 */
export function requestKey(
  headers: Record<string, string | string[] | undefined>,
  form: AuthForm = 'any',
): string | undefined {
  const auth = headers.authorization;
  if (form !== 'x-api-key' && typeof auth === 'string') {
    const m = /^bearer\s+(\S+)\s*$/i.exec(auth);
    if (m !== null) return m[1];
  }
  if (form === 'bearer') return undefined;
  const header = headers['x-api-key'];
  return typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined;
}

/** Which auth header forms a server accepts (the auth quirk). */
export type AuthForm = 'any' | 'bearer' | 'x-api-key';

const HOW_TO_SEND: Readonly<Record<AuthForm, string>> = {
  any: 'send "Authorization: Bearer <key>" or "x-api-key: <key>"',
  bearer: 'send "Authorization: Bearer <key>"',
  'x-api-key': 'send "x-api-key: <key>"',
};

/** Strips the IPv4-mapped IPv6 prefix so '::ffff:127.0.0.1' matches '127.0.0.1'. */
export function normaliseIp(ip: string | undefined): string {
  return (ip ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/** The accepted keys and their restrictions. Error messages never echo the key. */
export class KeyRing {
  private readonly keys = new Map<string, EmulatorKey>();

  constructor(keys: readonly EmulatorKey[], demoKey: boolean) {
    if (demoKey) this.keys.set(DEMO_KEY, { key: DEMO_KEY });
    for (const k of keys) this.keys.set(k.key, k);
  }

  /** 401 when the key is missing (in the accepted header forms) or unknown; the key otherwise. */
  authenticate(key: string | undefined, form: AuthForm = 'any'): EmulatorKey {
    if (key === undefined) throw new ApiError(401, 'unauthorized', `API key missing: ${HOW_TO_SEND[form]}.`);
    const found = this.keys.get(key);
    if (found === undefined)
      throw new ApiError(401, 'unauthorized', 'API key invalid: check the key in your settings.');
    return found;
  }

  /** 403 when the key lacks the scope, the method or the client IP. */
  authorize(key: EmulatorKey, scope: Scope, method: string, ip: string): number {
    if (key.scopes !== undefined && !key.scopes.includes(scope))
      throw new ApiError(403, 'forbidden', `This API key lacks the scope "${scope}".`);
    if (key.methods !== undefined && !key.methods.map((m) => m.toUpperCase()).includes(method))
      throw new ApiError(403, 'forbidden', `This API key may not use the method ${method}.`);
    if (key.ips !== undefined && !key.ips.map(normaliseIp).includes(normaliseIp(ip)))
      throw new ApiError(403, 'forbidden', `This API key may not be used from ${normaliseIp(ip)}.`);
    return key.accountId ?? API_ACCOUNT_ID;
  }
}

const KEY_SCHEMA = z.object({
  key: z.string().min(1),
  scopes: z.array(z.enum(['campaigns', 'creatives', 'reports'])).optional(),
  methods: z.array(z.string().regex(/^[A-Za-z]+$/)).optional(),
  ips: z.array(z.string().min(1)).optional(),
  accountId: z.number().int().positive().optional(),
});
const KEYS_SCHEMA = z.array(KEY_SCHEMA);

/** Parses a keys file: a JSON array of keys, or `{"keys": [...]}`. Throws with the file's path and problem. */
export function parseKeysFile(text: string, path: string): EmulatorKey[] {
  const expected =
    'expected [{"key": "...", "scopes": ["campaigns", "creatives", "reports"], "methods": ["GET"], "ips": ["127.0.0.1"]}]';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not valid JSON; ${expected}`, { cause: error });
  }
  // Both shapes share one schema, so an error can name the exact entry and field.
  const list =
    typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as { keys?: unknown }).keys
      : json;
  const parsed = KEYS_SCHEMA.safeParse(list);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}; ${expected}`);
  }
  return parsed.data;
}

/** Reads and parses a keys file. */
export function loadKeysFile(path: string): EmulatorKey[] {
  return parseKeysFile(readFileSync(path, 'utf8'), path);
}
