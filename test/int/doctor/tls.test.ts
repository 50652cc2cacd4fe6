// `adops doctor` against an https server whose certificate this machine does not trust: the
// reachability row names the TLS error and the doctor exits 1.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/run-cli.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

/** A fresh self-signed certificate for 127.0.0.1 (openssl). */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'adops-tls-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1'].concat([
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]),
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
}

describe('adops doctor over https', () => {
  it('fails on an untrusted certificate, naming the TLS error, and sends no request', async () => {
    let requests = 0;
    server = createServer(selfSigned(), (_req, res) => {
      requests++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const run = await runCli(['doctor'], {
      ADOPS_BASE_URL: `https://127.0.0.1:${port}/v2`,
      ADOPS_API_KEY: 'demo-key',
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /reachability\s+│ fail\s+│ 127\.0\.0\.1:\d+: TLS failed \(DEPTH_ZERO_SELF_SIGNED_CERT/,
    );
    expect(run.stderr).toContain("the server's certificate is not trusted by this machine");
    // The key never travelled: undici refused the same certificate before sending anything.
    expect(requests).toBe(0);
  });
});
