import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadConfig, secretsOf } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';

/** A Standard Webhooks secret of `bytes` key bytes. */
const secretOf = (bytes: number) => `whsec_${Buffer.alloc(bytes, 0xa5).toString('base64')}`;
const SECRET = secretOf(32);
const HOW = 'generate one with: echo "whsec_$(openssl rand -base64 32)"';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('webhook configuration', () => {
  it('is off without ADOPS_WEBHOOK_URL, even with a secret set', () => {
    expect(loadConfig({}).webhook).toBeUndefined();
    expect(loadConfig({ ADOPS_WEBHOOK_SECRET: SECRET }).webhook).toBeUndefined();
  });

  it('reads an http or https URL and its secret', () => {
    expect(
      loadConfig({ ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a?b=1', ADOPS_WEBHOOK_SECRET: SECRET })
        .webhook,
    ).toEqual({ url: 'https://hooks.example.com/a?b=1', secret: SECRET });
    expect(
      loadConfig({ ADOPS_WEBHOOK_URL: 'http://127.0.0.1:8080/x', ADOPS_WEBHOOK_SECRET: SECRET }).webhook?.url,
    ).toBe('http://127.0.0.1:8080/x');
  });

  it.each(['ftp://hooks.example.com/x', 'hooks.example.com/x', 'not a url'])(
    'refuses ADOPS_WEBHOOK_URL=%s in one line naming the variable',
    (url) => {
      const error = configError({ ADOPS_WEBHOOK_URL: url, ADOPS_WEBHOOK_SECRET: SECRET });
      expect(error.message).toMatch(/^ADOPS_WEBHOOK_URL=.* is invalid: expected an http\(s\) URL/);
      expect(error.message.split('\n')).toHaveLength(1);
    },
  );

  it('requires ADOPS_WEBHOOK_SECRET once the URL is set, saying how to make one', () => {
    const error = configError({ ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a' });
    expect(error.message).toBe(
      `ADOPS_WEBHOOK_SECRET is missing: ADOPS_WEBHOOK_URL is set, so events must be signed; set ADOPS_WEBHOOK_SECRET to whsec_ followed by the base64 of 24 to 64 random bytes; ${HOW}`,
    );
  });

  it.each([
    ['no whsec_ prefix', Buffer.alloc(32, 1).toString('base64')],
    ['the old free-form kind', 'a-long-enough-free-form-secret-0123456789'],
    ['whsec_ and nothing', 'whsec_'],
    ['not base64', 'whsec_not*base64*at*all*0123456789abcdefghij'],
    ['unpadded base64', `whsec_${Buffer.alloc(32, 1).toString('base64').replace(/=+$/, '')}`],
    ['url-safe base64', `whsec_${Buffer.alloc(33, 0xfb).toString('base64url')}`],
  ])('refuses %s in one line naming the form, without echoing it', (_what, secret) => {
    const error = configError({
      ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
      ADOPS_WEBHOOK_SECRET: secret,
    });
    expect(error.message).toBe(
      `ADOPS_WEBHOOK_SECRET is not a Standard Webhooks secret: expected whsec_ followed by the base64 of 24 to 64 random bytes; ${HOW}`,
    );
    expect(error.subject).toBe('ADOPS_WEBHOOK_SECRET');
  });

  it('refuses a key under 24 or over 64 bytes, saying its size, and takes 24 and 64', () => {
    for (const bytes of [16, 23, 65]) {
      const error = configError({
        ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
        ADOPS_WEBHOOK_SECRET: secretOf(bytes),
      });
      expect(error.message).toBe(
        `ADOPS_WEBHOOK_SECRET holds a ${bytes}-byte key: expected whsec_ followed by the base64 of 24 to 64 random bytes; ${HOW}`,
      );
      expect(error.message).not.toContain(secretOf(bytes).slice(6, 14));
    }
    for (const bytes of [24, 64])
      expect(
        loadConfig({
          ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
          ADOPS_WEBHOOK_SECRET: secretOf(bytes),
        }).webhook?.secret,
      ).toBe(secretOf(bytes));
  });

  it('lists the webhook secret beside the API key among the secrets to redact', () => {
    const config = loadConfig({
      ADOPS_API_KEY: 'key-123456',
      ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
      ADOPS_WEBHOOK_SECRET: SECRET,
    });
    // The key also without its prefix, as a receiver might quote it.
    expect(secretsOf(config)).toEqual(['key-123456', SECRET, SECRET.slice('whsec_'.length)]);
    expect(secretsOf(loadConfig({}))).toEqual([]);
  });
});

describe('adops with a bad webhook setting', () => {
  it('exits 2 with one line naming ADOPS_WEBHOOK_SECRET and never prints it', async () => {
    const err: string[] = [];
    const sink = (into: string[]) =>
      new Writable({
        write(chunk: Buffer | string, _enc, done) {
          into.push(chunk.toString());
          done();
        },
      });
    const code = await main(
      ['node', 'adops', 'schedule'],
      { ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a', ADOPS_WEBHOOK_SECRET: 'short-secret-0123456789' },
      sink([]),
      sink(err),
    );
    expect(code).toBe(2);
    const text = err.join('');
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(text).toContain('ADOPS_WEBHOOK_SECRET is not a Standard Webhooks secret: expected whsec_');
    expect(text).not.toContain('short-secret');
  });
});
