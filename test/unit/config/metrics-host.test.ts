import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config/env.js';
import { ConfigError } from '../../../src/platform/config/files.js';

describe('ADOPS_METRICS_HOST', () => {
  it('defaults to the loopback address, so /metrics and /health are not open to the network', () => {
    expect(loadConfig({}).metricsHost).toBe('127.0.0.1');
  });

  it.each(['0.0.0.0', '::', '::1', '10.1.2.3', 'worker-1.internal'])('accepts %s', (host) => {
    expect(loadConfig({ ADOPS_METRICS_HOST: host }).metricsHost).toBe(host);
  });

  it.each(['http://0.0.0.0', '0.0.0.0:9464', 'a host', '-x'])('refuses %s, naming the variable', (host) => {
    expect(() => loadConfig({ ADOPS_METRICS_HOST: host })).toThrow(ConfigError);
    expect(() => loadConfig({ ADOPS_METRICS_HOST: host })).toThrow(
      /ADOPS_METRICS_HOST=.* is invalid: expected an IP address or host name/,
    );
  });
});
