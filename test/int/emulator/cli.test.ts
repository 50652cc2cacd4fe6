import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

const FIXTURE = new URL('./fixtures/adops.ts', import.meta.url).pathname;
let child: ChildProcess | undefined;

afterEach(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  child = undefined;
});

/** Spawns `adops emulator ...` and resolves with its first stdout line. */
async function spawnEmulator(
  args: string[],
): Promise<{ url: string; proc: ChildProcess; stderr: () => string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'emulator', ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const lines = createInterface({ input: proc.stdout! });
  const [url] = (await Promise.race([
    once(lines, 'line'),
    once(proc, 'exit').then(() => {
      throw new Error(`emulator exited: ${err}`);
    }),
  ])) as [string];
  return { url, proc, stderr: () => err };
}

describe('adops emulator command', () => {
  it('prints its base URL first, serves with flags applied, and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'adops-emu-'));
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, JSON.stringify([{ key: 'team-key', scopes: ['reports'] }]));
    const { url, proc } = await spawnEmulator([
      '--seed',
      '4',
      '--keys',
      keys,
      '--no-demo-key',
      '--fail-rate',
      '1',
      '--fault-paths',
      '/v2/campaigns',
    ]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
    const report = await request(`${url}/reports?date_from=2025-01-01&date_until=2025-01-01&dimensions=day`, {
      headers: { 'x-api-key': 'team-key' },
    });
    expect(report.statusCode).toBe(200);
    await report.body.dump();
    const demo = await request(`${url}/reports?date_from=2025-01-01&date_until=2025-01-01&dimensions=day`, {
      headers: { authorization: 'Bearer demo-key' },
    });
    expect(demo.statusCode).toBe(401);
    await demo.body.dump();
    const failing = await request(`${url}/campaigns`, { headers: { 'x-api-key': 'team-key' } });
    expect(failing.statusCode).toBe(500);
    await failing.body.dump();
    proc.kill('SIGTERM');
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('applies --profile and the quirk flags, and still prints the base URL first', async () => {
    const { url, proc, stderr } = await spawnEmulator([
      '--profile',
      'php',
      '--quirks',
      'gzip,no-sort-keys',
      '--report-params',
      'comma',
      '--clock-skew',
      '-120',
    ]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
    const bearer = await request(`${url}/campaigns?limit=1`, {
      headers: { authorization: 'Bearer demo-key' },
    });
    expect(bearer.statusCode).toBe(401);
    await bearer.body.dump();
    const report = await request(
      `${url}/reports?date_from=2025-01-01&date_until=2025-01-01&dimensions=day,device`,
      {
        headers: { 'x-api-key': 'demo-key', 'accept-encoding': 'gzip' },
      },
    );
    expect([report.statusCode, report.headers['content-encoding']]).toEqual([200, 'gzip']);
    const doc = JSON.parse(gunzipSync(Buffer.from(await report.body.arrayBuffer())).toString()) as {
      items: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(Object.keys(doc)).toEqual(['items', 'totals']);
    expect(doc.items['2025-01-01']?.mobile?.ad_requests).toMatch(/^\d+$/);
    expect(Date.parse(String(report.headers.date)) - Date.now()).toBeLessThan(-100_000);
    expect(stderr()).toContain(
      'profile php; quirks: reportParams=comma, auth=x-api-key, stringValues, emptyAsArray, gzip, clockSkewSeconds=-120',
    );
    proc.kill('SIGTERM');
    expect(((await once(proc, 'exit')) as [number | null])[0]).toBe(0);
  });

  it('echoes the key where --echo-key says, and where PUT /_control/quirks later says', async () => {
    const { url, proc, stderr } = await spawnEmulator(['--echo-key', 'header,error']);
    const headers = { authorization: 'Bearer demo-key' };
    const report = await request(`${url}/reports?date_from=2025-01-01&date_until=2025-01-01&dimensions=day`, {
      headers,
    });
    expect(report.headers['x-request-key']).toBe('demo-key');
    expect(await report.body.text()).not.toContain('demo-key');
    const refused = await request(`${url}/reports?date_from=2025-01-01`, { headers });
    expect(refused.statusCode).toBe(400);
    expect(await refused.body.text()).toContain('(key demo-key)');
    const origin = new URL(url).origin;
    const set = await request(`${origin}/_control/quirks`, { method: 'PUT', body: '{"echoKey":["body"]}' });
    expect(set.statusCode).toBe(204);
    await set.body.dump();
    const listing = await request(`${url}/campaigns?limit=1`, { headers });
    expect(listing.headers['x-request-key']).toBeUndefined();
    expect(await listing.body.json()).toMatchObject({ request_key: 'demo-key' });
    expect(stderr()).toContain('quirks: echoKey=header,error');
    proc.kill('SIGTERM');
    expect(((await once(proc, 'exit')) as [number | null])[0]).toBe(0);
  });
});
