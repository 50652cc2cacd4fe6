import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadConfig, secretsOf, WEBHOOK_SECRET_MIN } from '../../../src/config/env.js';
import { ConfigError } from '../../../src/config/errors.js';

const SECRET = 'whsec-0123456789abcdef';

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

  it('requires ADOPS_WEBHOOK_SECRET once the URL is set', () => {
    const error = configError({ ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a' });
    expect(error.message).toMatch(/^ADOPS_WEBHOOK_SECRET is missing: ADOPS_WEBHOOK_URL is set/);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it(`refuses a secret under ${WEBHOOK_SECRET_MIN} characters without echoing it`, () => {
    const short = 'tooShort-secret';
    expect(short).toHaveLength(WEBHOOK_SECRET_MIN - 1);
    const error = configError({
      ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
      ADOPS_WEBHOOK_SECRET: short,
    });
    expect(error.message).toBe('ADOPS_WEBHOOK_SECRET is too short (15 characters): expected at least 16');
    expect(error.message).not.toContain(short);
    expect(
      loadConfig({ ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a', ADOPS_WEBHOOK_SECRET: `${short}x` })
        .webhook?.secret,
    ).toBe(`${short}x`);
  });

  it('lists the webhook secret beside the API key among the secrets to redact', () => {
    const config = loadConfig({
      ADOPS_API_KEY: 'key-123456',
      ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a',
      ADOPS_WEBHOOK_SECRET: SECRET,
    });
    expect(secretsOf(config)).toEqual(['key-123456', SECRET]);
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
      { ADOPS_WEBHOOK_URL: 'https://hooks.example.com/a', ADOPS_WEBHOOK_SECRET: 'short-secret' },
      sink([]),
      sink(err),
    );
    expect(code).toBe(2);
    const text = err.join('');
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(text).toContain('ADOPS_WEBHOOK_SECRET is too short (12 characters)');
    expect(text).not.toContain('short-secret');
  });
});
