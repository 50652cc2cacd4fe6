// `adops pull` end to end: the real CLI entry (main) against the emulator over HTTP.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { parseReport } from '../../../src/flatten/parse.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ seed: 3, cellsPerDay: 200, lateDataDays: 0 });
});
afterAll(() => emu.close());
beforeEach(() => emu.setFaults({}));

/** A stream that keeps what is written to it. */
function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return Object.assign(w, { text: () => chunks.join('') });
}

async function adops(args: string[], env: Record<string, string> = {}, options: { tty?: boolean } = {}) {
  const stdout = Object.assign(sink(), options.tty === true ? { isTTY: true } : {});
  const stderr = sink();
  const code = await main(
    ['node', 'adops', ...args],
    {
      ADOPS_BASE_URL: emu.url,
      ADOPS_API_KEY: 'demo-key',
      ADOPS_HTTP_MAX_BACKOFF_MS: '20',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdout,
    stderr,
  );
  return { code, out: stdout.text(), err: stderr.text() };
}

const args = ['pull', '--dimensions', 'day,country', '--from', '2026-02-01', '--to', '2026-02-02'];

describe('adops pull', () => {
  it('prints a CSV header and the rows on stdout, totals and reconciliation on stderr', async () => {
    const r = await adops([...args, '--format', 'csv']);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'day,country,ad_requests,filled_impressions,impressions,measurable_impressions,viewable_impressions',
    );
    const raw = await fetch(
      `${emu.url}/reports?date_from=2026-02-01&date_until=2026-02-02&dimensions=day,country`,
      {
        headers: { authorization: 'Bearer demo-key' },
      },
    );
    const expected = parseReport(Buffer.from(await raw.arrayBuffer()), ['day', 'country']);
    expect(lines.length - 1).toBe(expected.rows.length);
    expect(lines[1]).toBe([...expected.rows[0]!.dims, ...expected.rows[0]!.counters].join(','));
    expect(r.err).toContain(`totals: ad_requests=${expected.totals.ad_requests} `);
    expect(r.err).toContain('reconciliation: ok');
  });

  it('prints valid JSON with --format json and a table with --format table', async () => {
    const json = await adops([...args, '--format', 'json']);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.out) as Array<Record<string, unknown>>;
    expect(rows.length).toBeGreaterThan(1);
    expect(Object.keys(rows[0]!)).toEqual([
      'day',
      'country',
      'ad_requests',
      'filled_impressions',
      'impressions',
      'measurable_impressions',
      'viewable_impressions',
    ]);
    const table = await adops([...args, '--format', 'table']);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/│ day\s+│ country\s+│ ad_requests.*\n├─/);
    expect(table.out).not.toContain('\u001b[');
  });

  it('quotes CSV values holding commas and quotes', async () => {
    const r = await adops(['pull', '--dimensions', 'landing_url', '--from', '2026-02-01', '--format', 'csv']);
    expect(r.code).toBe(0);
    const quoted = r.out.split('\n').find((l) => l.startsWith('"'));
    expect(quoted).toMatch(/^"[^"]*(""[^"]*)*",\d+,/);
  });

  it('exits 1 with the hint and nothing on stdout when the key is refused, never echoing the key', async () => {
    const r = await adops([...args], { ADOPS_API_KEY: 'not-a-valid-key-123' });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('HTTP 401');
    expect(r.err).toContain('check ADOPS_API_KEY');
    expect(r.err).not.toContain('not-a-valid-key-123');
  });

  it('exits 1 on an unusable body, names the path, and keeps the body with --raw', async () => {
    const body = '{"items":{"2026-02-01":{"DE":{"ad_requests":-1}}},"totals":{}}';
    emu.override({ path: '/v2/reports', status: 200, body });
    const dir = await mkdtemp(join(tmpdir(), 'adops-pull-'));
    const r = await adops([...args, '--raw', join(dir, 'raw.json')]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('report body is not usable at items["2026-02-01"]["DE"].ad_requests');
    expect(await readFile(join(dir, 'raw.json'), 'utf8')).toBe(body);
    await rm(dir, { recursive: true });
  });

  it('blames the request form, not the data, when a server that reads another form answers other dimensions', async () => {
    emu.setQuirks({ reportParams: 'brackets' });
    try {
      const pull = (dims: string, form: string) =>
        adops(['pull', '--dimensions', dims, '--from', '2026-02-01', '--to', '2026-02-02'], {
          ADOPS_REPORT_PARAMS: form,
        });
      // The server reads only the last of the repeated values: it answers by that dimension alone,
      // so its values sit where the first belongs, or its rows one level up.
      for (const [dims, form] of [
        ['day,campaign_id', 'repeat'],
        ['campaign_id,day', 'repeat'],
        ['country,day', 'repeat'],
      ] as const) {
        const r = await pull(dims, form);
        expect([dims, form, r.code, r.out]).toEqual([dims, form, 1, '']);
        expect(r.err, `${dims} ${form}: ${r.err}`).toMatch(
          /the body.s shape does not match the dimensions asked/,
        );
        expect(r.err).toContain('ADOPS_REPORT_PARAMS');
        expect(r.err).toContain('adops doctor');
        expect(r.err).not.toContain('widened');
      }
      // A value that fits no asked dimension is still the data's: reported as such.
      emu.setQuirks({});
      emu.override({
        path: '/v2/reports',
        status: 200,
        body: '{"items":{"2026-02-31":{"7":{"ad_requests":1,"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}}}}',
      });
      const bad = await pull('day,campaign_id', 'repeat');
      expect(bad.code).toBe(1);
      expect(bad.err).toContain('column type can be widened');
    } finally {
      emu.setQuirks({});
    }
  });

  it('warns on a mismatch with the totals, and fails on it with --strict', async () => {
    const body = JSON.stringify({
      items: {
        '2026-02-01': {
          DE: {
            ad_requests: 1,
            filled_impressions: 1,
            impressions: 1,
            measurable_impressions: 1,
            viewable_impressions: 1,
          },
        },
      },
      totals: {
        ad_requests: 2,
        filled_impressions: 1,
        impressions: 1,
        measurable_impressions: 1,
        viewable_impressions: 1,
      },
    });
    emu.override({ path: '/v2/reports', status: 200, body });
    const lenient = await adops([...args, '--format', 'csv']);
    expect(lenient.code).toBe(0);
    expect(lenient.out.split('\n')[1]).toBe('2026-02-01,DE,1,1,1,1,1');
    expect(lenient.err).toContain('reconciliation: MISMATCH ad_requests rows=1 totals=2');
    emu.override({ path: '/v2/reports', status: 200, body });
    const strict = await adops([...args, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.out).toBe('');
    expect(strict.err).toContain('do not add up');
  });

  it('survives injected faults and still exits 0', async () => {
    emu.setFaults({ failRate: 0.3, dropRate: 0.1, paths: ['/v2/reports'], seed: 5 });
    const r = await adops([...args, '--format', 'csv'], { ADOPS_HTTP_ATTEMPTS: '20' });
    expect(r.code).toBe(0);
    expect(r.err).toContain('reconciliation: ok');
  });

  /** A body whose country values are `values`, each with counters 1, and totals that match. */
  function bodyWith(values: string[]): string {
    const one = {
      ad_requests: 1,
      filled_impressions: 1,
      impressions: 1,
      measurable_impressions: 1,
      viewable_impressions: 1,
    };
    const n = values.length;
    return JSON.stringify({
      items: { '2026-02-01': Object.fromEntries(values.map((v) => [v, one])) },
      totals: {
        ad_requests: n,
        filled_impressions: n,
        impressions: n,
        measurable_impressions: n,
        viewable_impressions: n,
      },
    });
  }
  const oneDay = ['pull', '--dimensions', 'day,country', '--from', '2026-02-01'];

  it('shows control characters of API values escaped in a table, so they cannot drive the terminal', async () => {
    const hostile = [
      '\u001b]0;pwned\u0007', // sets the terminal title
      '\u001b[2J\u001b[H', // clears the screen
      'a\u009b31mb', // C1 CSI
      'two\nlines\rback\ttab\u007f',
      '\u202eevil', // right-to-left override
    ];
    emu.override({ path: '/v2/reports', status: 200, body: bodyWith(hostile) });
    const r = await adops([...oneDay, '--format', 'table'], {}, { tty: true });
    expect(r.code, r.err).toBe(0);
    // eslint-disable-next-line no-control-regex -- control characters are what must not get through
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(r.out).toContain('\\x1b]0;pwned\\x07');
    expect(r.out).toContain('\\x1b[2J\\x1b[H');
    expect(r.out).toContain('a\\x9b31mb');
    expect(r.out).toContain('two\\nlines\\rback\\ttab\\x7f');
    expect(r.out).toContain('\\u202eevil');
    // One line per row: a value's newline does not break the table.
    expect(r.out.trimEnd().split('\n')).toHaveLength(4 + hostile.length);
  });

  it('shows control characters of API values escaped in CSV on a terminal, and exact into a pipe', async () => {
    const hostile = [
      '\u001b]0;pwned\u0007', // OSC: sets the terminal title
      '\u001b[2J\u001b[H', // CSI: clears the screen
      'a\u009b31mb', // C1 CSI
      'two\nlines\rback\ttab\u007f',
      '\u202eevil', // right-to-left override
    ];
    for (const flags of [[], ['--csv-safe'], ['--no-csv-safe']]) {
      emu.override({ path: '/v2/reports', status: 200, body: bodyWith(hostile) });
      const tty = await adops([...oneDay, '--format', 'csv', ...flags], {}, { tty: true });
      expect(tty.code, tty.err).toBe(0);
      // Only the line ends are left: one line per row, nothing that drives the terminal.
      // eslint-disable-next-line no-control-regex -- control characters are what must not get through
      expect(tty.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(tty.out.trimEnd().split('\n')).toHaveLength(1 + hostile.length);
      for (const shown of [
        '\\x1b]0;pwned\\x07',
        '\\x1b[2J\\x1b[H',
        'a\\x9b31mb',
        'two\\nlines\\rback\\ttab\\x7f',
        '\\u202eevil',
      ])
        expect(tty.out, flags.join(' ')).toContain(`2026-02-01,${shown},1,1,1,1,1\n`);
    }
    // Into a pipe or file the values stay exactly as sent (quoted where CSV needs it).
    emu.override({ path: '/v2/reports', status: 200, body: bodyWith(hostile) });
    const piped = await adops([...oneDay, '--format', 'csv']);
    expect(piped.code, piped.err).toBe(0);
    for (const value of hostile) {
      const cell = /[\n\r]/.test(value) ? `"${value}"` : value;
      expect(piped.out).toContain(`2026-02-01,${cell},1,1,1,1,1\n`);
    }
  });

  it('escapes C1 and bidi controls of an API error message on stderr, so they cannot drive the terminal', async () => {
    emu.override({
      path: '/v2/reports',
      status: 400,
      body: JSON.stringify({ message: 'bad \u009b2J request \u202eevil \u001b]0;t\u0007' }),
    });
    const r = await adops([...oneDay, '--format', 'csv']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('HTTP 400');
    // eslint-disable-next-line no-control-regex -- control characters are what must not get through
    expect(r.err).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(r.err).toContain('bad \\x9b2J request \\u202eevil');
  });

  describe('CSV formula injection', () => {
    const cells = ['=HYPERLINK("http://x","y")', '+1', '-2', '@SUM(A1)', '\tx', '\rx', 'plain', 'a=b'];
    const safe = [
      '"\'=HYPERLINK(""http://x"",""y"")"',
      "'+1",
      "'-2",
      "'@SUM(A1)",
      "'\tx",
      '"\'\rx"',
      'plain',
      'a=b',
    ];
    /** The country cells of the CSV, as written, sorted (rows come in the body's order, not ours). */
    const countries = (out: string) =>
      out
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.replace(/^2026-02-01,/, '').replace(/,1,1,1,1,1$/, ''))
        .sort();

    it('prefixes cells starting with = + - @ tab or CR with a quote when stdout is a terminal', async () => {
      emu.override({ path: '/v2/reports', status: 200, body: bodyWith(cells) });
      const r = await adops([...oneDay, '--format', 'csv'], {}, { tty: true });
      expect(r.code, r.err).toBe(0);
      // On a terminal the tab and CR are then shown escaped, so those cells need no CSV quotes.
      const shown = safe.map((c) => c.replace("'\tx", "'\\tx").replace('"\'\rx"', "'\\rx"));
      expect(shown).toContain("'\\tx");
      expect(shown).toContain("'\\rx");
      expect(countries(r.out)).toEqual([...shown].sort());
    });

    it('also with --csv-safe into a pipe or file', async () => {
      emu.override({ path: '/v2/reports', status: 200, body: bodyWith(cells) });
      const r = await adops([...oneDay, '--format', 'csv', '--csv-safe']);
      expect(r.code, r.err).toBe(0);
      expect(countries(r.out)).toEqual([...safe].sort());
    });

    it('keeps values as sent into a pipe or file, and on a terminal with --no-csv-safe (control characters escaped)', async () => {
      const exact = cells.map((c) => (/[",\r]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c));
      emu.override({ path: '/v2/reports', status: 200, body: bodyWith(cells) });
      const piped = await adops([...oneDay, '--format', 'csv']);
      expect(piped.code, piped.err).toBe(0);
      expect(countries(piped.out)).toEqual([...exact].sort());
      emu.override({ path: '/v2/reports', status: 200, body: bodyWith(cells) });
      const tty = await adops([...oneDay, '--format', 'csv', '--no-csv-safe'], {}, { tty: true });
      expect(tty.code, tty.err).toBe(0);
      const shown = exact.map((c) => c.replace('\tx', '\\tx').replace('"\rx"', '\\rx'));
      expect(countries(tty.out)).toEqual([...shown].sort());
    });
  });

  const usage: Array<[string, string[], Record<string, string>, RegExp]> = [
    [
      'an unknown dimension',
      ['pull', '--dimensions', 'day,clicks', '--from', '2026-02-01'],
      {},
      /"clicks" is not a dimension/,
    ],
    ['a repeated dimension', ['pull', '--dimensions', 'day,day', '--from', '2026-02-01'], {}, /listed twice/],
    [
      'an impossible date',
      ['pull', '--dimensions', 'day', '--from', '2026-02-30'],
      {},
      /--from: "2026-02-30"/,
    ],
    [
      'a range ending before it starts',
      ['pull', '--dimensions', 'day', '--from', '2026-02-03', '--to', '2026-02-01'],
      {},
      /before --from/,
    ],
    [
      'an unknown format',
      ['pull', '--dimensions', 'day', '--from', '2026-02-01', '--format', 'xml'],
      {},
      /--format: "xml"/,
    ],
    [
      'a missing base URL',
      ['pull', '--dimensions', 'day', '--from', '2026-02-01'],
      { ADOPS_BASE_URL: '' },
      /ADOPS_BASE_URL is missing/,
    ],
  ];
  for (const [what, argv, env, message] of usage) {
    it(`exits 2 on ${what}`, async () => {
      emu.resetStats();
      const r = await adops(argv, env);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.out).toBe('');
      expect(emu.stats().requests['GET /v2/reports'] ?? 0).toBe(0);
    });
  }
});
