// A misspelt ADOPS_* variable does nothing: each gets one warning naming the closest one adops reads.
import { describe, expect, it } from 'vitest';
import { unknownVariableWarnings } from '../../../src/platform/config/unknown-vars.js';

describe('unknownVariableWarnings', () => {
  it('warns once per unknown ADOPS_* variable, naming the closest known one', () => {
    expect(
      unknownVariableWarnings({
        ADOPS_SHEMA: 'x',
        ADOPS_REDIS_OUTAGE_SECOND: '30',
        ADOPS_QUEUE: 'postgres',
        ADOPS_API_KEY: 'k',
        REDIS_URL: 'redis://127.0.0.1:6379',
        HOME: '/root',
      }),
    ).toEqual([
      'ADOPS_REDIS_OUTAGE_SECOND is not a variable adops reads (ignored); did you mean ADOPS_REDIS_OUTAGE_SECONDS?',
      'ADOPS_SHEMA is not a variable adops reads (ignored); did you mean ADOPS_SCHEMA?',
    ]);
  });

  it('knows every variable read apart from the schema, and the ones an accounts file names', () => {
    const env = {
      ADOPS_API_KEY_FILE: '/k',
      ADOPS_WEBHOOK_SECRET: 'whsec_x',
      ADOPS_ACCOUNTS_FILE: 'a.yaml',
      ADOPS_KEY_NORTH: 'k',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'postgres:///x',
    };
    expect(unknownVariableWarnings(env, ['ADOPS_KEY_NORTH'])).toEqual([]);
    expect(unknownVariableWarnings(env)).toEqual([
      expect.stringMatching(
        /^ADOPS_KEY_NORTH is not a variable adops reads \(ignored\); did you mean ADOPS_/,
      ),
    ]);
  });

  it('never quotes the value, which may be a key', () => {
    const [line] = unknownVariableWarnings({ ADOPS_APIKEY: 'sekrit-value' });
    expect(line).toContain('did you mean ADOPS_API_KEY?');
    expect(line).not.toContain('sekrit');
  });
});
