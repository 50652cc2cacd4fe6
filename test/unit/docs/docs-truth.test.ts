// Docs are product: every path, link (and its #anchor), `adops` command and flag, and ADOPS_* variable a markdown file names exists,
// and every variable the configuration reads is in README's Configuration section (issue 36).
// CHANGELOG.md is history and is not read. The checker is scripts/docs-truth.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkDoc,
  existsUnder,
  headingAnchors,
  pathFindings,
  undocumentedVariables,
  variablesNamedIn,
  type Allowed,
  type CommandShape,
  type Truth,
} from '../../../scripts/docs-truth.js';
import { runCli } from '../../helpers/run-cli.js';

const root = join(import.meta.dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The markdown files that describe the product as it is now: every one at the top and in docs/, but
 * CHANGELOG.md (history). */
const DOCS = [
  ...readdirSync(root).filter((f) => f.endsWith('.md') && f !== 'CHANGELOG.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Names the docs may use though nothing in the repository answers to them, each with its reason. */
const ALLOWED: readonly Allowed[] = [
  {
    file: 'docs/operations.md',
    text: 'ADOPS_KEY_SOUTH',
    why: "an example of api_key_env: the name of the user's own variable that holds an account's key",
  },
  {
    file: 'RELIABILITY.md',
    text: 'ADOPS_BIG_BODY_MB',
    why: 'names a setting that went in 1.0, as history (RELIABILITY.md is edited by the lead only)',
  },
  {
    file: 'RELIABILITY.md',
    text: 'jobs/evil.yaml',
    why: 'the file an attack of the generated table writes into a temporary jobs folder',
  },
  {
    file: 'BENCHMARKS.md',
    text: 'bench/.cache/',
    why: "the bench's cache folder, made on its first run and ignored by git",
  },
  {
    file: 'src/schema/migrate.ts',
    text: 'sql/001_schema.sql',
    why: 'the pre-1.0 file a refused warehouse recorded: named so the refusal says what it found',
  },
];

/** The variables the configuration reads: src/platform/config/env.ts, and the Redis variables it hands to connections.ts. */
const configVariables = new Set([
  ...variablesNamedIn(read('src/platform/config/env.ts')),
  ...variablesNamedIn(read('src/platform/config/connections.ts')),
]);

/** ADOPS_* variables docs may name besides the configuration's: those docker compose files interpolate
 * (`${ADOPS_BIND:-127.0.0.1}`) and those the test suite reads (ADOPS_TEST_*). */
function otherVariables(): Set<string> {
  const compose = readdirSync(root).filter((f) => /^docker-compose.*\.ya?ml$/.test(f));
  const interpolated = compose.flatMap((f) =>
    [...read(f).matchAll(/\$\{(ADOPS_[A-Z0-9_]+)/g)].map((m) => m[1]),
  );
  const tests = [
    'vitest.config.ts',
    ...readdirSync(join(root, 'test/helpers'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `test/helpers/${f}`),
  ].flatMap((f) => read(f).match(/ADOPS_TEST_[A-Z0-9_]+/g) ?? []);
  return new Set([...interpolated, ...tests].filter((v): v is string => v !== undefined));
}

/** The long flags and subcommands `adops <path> --help` lists: the real program, as a user sees it. */
async function shapeOf(path: readonly string[]): Promise<CommandShape> {
  const run = await runCli([...path, '--help'], {});
  expect(run.code, `adops ${path.join(' ')} --help: ${run.stderr}`).toBe(0);
  const section = (title: string) =>
    new RegExp(`^${title}:\\n((?: {2}.*\\n?)*)`, 'm').exec(run.stdout)?.[1] ?? '';
  const flags = new Set(
    [...section('Options').matchAll(/^ {2}(?:-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*)/gm)].map((m) => m[1] ?? ''),
  );
  const names = [...section('Commands').matchAll(/^ {2}([a-z][a-z0-9-]*)/gm)]
    .map((m) => m[1] ?? '')
    .filter((n) => n !== 'help');
  const subcommands = new Map<string, CommandShape>();
  for (const name of names) subcommands.set(name, await shapeOf([...path, name]));
  return { flags, subcommands };
}

let truth: Truth;

beforeAll(async () => {
  truth = {
    exists: existsUnder(root),
    program: await shapeOf([]),
    variables: new Set([...configVariables, ...otherVariables()].filter((v) => v.startsWith('ADOPS_'))),
    markdown: (path) => (existsSync(join(root, path)) ? read(path) : undefined),
  };
  // Every command's module is loaded for its --help: seconds on a busy machine.
}, 120_000);

describe('the docs say only what is true', () => {
  it('reads the real CLI and configuration (a sanity check that the truth is not empty)', () => {
    expect(truth.program.subcommands.get('backfill')?.flags.has('--from')).toBe(true);
    expect(truth.program.subcommands.get('pull')?.flags.has('--no-csv-safe')).toBe(true);
    expect(truth.variables.has('ADOPS_SCHEMA')).toBe(true);
    expect(configVariables.has('REDIS_SENTINELS')).toBe(true);
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'docs/operations.md']));
  });

  it.each(DOCS)('%s names only paths, commands, flags and variables that exist', (doc) => {
    const found = checkDoc(doc, read(doc), truth, ALLOWED).map((f) => `${f.file}:${f.line}: ${f.what}`);
    expect(found).toEqual([]);
  });

  it('src/ names only paths that exist (in comments and messages)', () => {
    const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `src/${f}`);
    const found = sources
      .flatMap((f) => pathFindings(f, read(f), truth))
      .filter((f) => !ALLOWED.some((a) => a.file === f.file && f.what.includes(a.text)))
      .map((f) => `${f.file}:${f.line}: ${f.what}`);
    expect(found).toEqual([]);
  });

  it("README's Configuration section documents every variable the configuration reads", () => {
    expect(undocumentedVariables(read('README.md'), configVariables)).toEqual([]);
  });
});

describe('the docs checker', () => {
  const fixture: Truth = {
    exists: existsUnder(root),
    program: {
      flags: new Set(['--version']),
      subcommands: new Map([
        ['backfill', { flags: new Set(['--from', '--to', '--wait']), subcommands: new Map() }],
        [
          'accounts',
          {
            flags: new Set(),
            subcommands: new Map([['rename', { flags: new Set(['--dry-run']), subcommands: new Map() }]]),
          },
        ],
      ]),
    },
    variables: new Set(['ADOPS_SCHEMA', 'ADOPS_HTTP_ATTEMPTS']),
  };
  const check = (text: string) => checkDoc('docs/x.md', text, fixture).map((f) => f.what);

  it('fails on a path that does not exist, in prose, code or a link', () => {
    expect(check('The loader is in src/warehouse/load/nowhere.ts.')).toEqual([
      'names src/warehouse/load/nowhere.ts., which does not exist',
    ]);
    expect(check('See `src/report/` for parsing.')).toEqual(['names src/report/, which does not exist']);
    expect(check('[the client](../src/api/nowhere.ts)')).toEqual([
      'links to ../src/api/nowhere.ts, which does not exist',
    ]);
    expect(check('[ops](missing.md#x)')).toEqual(['links to missing.md#x, which does not exist']);
  });

  it('fails on a link to a heading its target doc lacks, and reads anchors as GitHub makes them', () => {
    const docs: Record<string, string> = {
      'README.md': '# adops\n## Configuration\n```sh\n# not a heading\n```\n## Two commands\n',
    };
    const withDocs: Truth = { ...fixture, markdown: (path) => docs[path] };
    const links = (text: string) => checkDoc('docs/x.md', text, withDocs).map((f) => f.what);
    expect(links('[config](../README.md#configuration), [two](../README.md#two-commands)')).toEqual([]);
    expect(links('[gone](../README.md#not-a-heading)')).toEqual([
      'links to ../README.md#not-a-heading, but README.md has no heading #not-a-heading',
    ]);
    expect(links('## Here\n[up](#here), [lost](#there)')).toEqual([
      'links to #there, but docs/x.md has no heading #there',
    ]);
    expect([
      ...headingAnchors(
        "## Giving `default` a name (`adops accounts rename`)\n## Changing a report's dimensions\n## A\n## A",
      ),
    ]).toEqual(['giving-default-a-name-adops-accounts-rename', 'changing-a-reports-dimensions', 'a', 'a-1']);
  });

  it('accepts a path that exists, with or without its extension, .js for .ts, as a pattern or a folder', () => {
    expect(
      check(
        'src/api/client.ts, src/api/client, `src/api/client.js`, src/api/, jobs/*.yaml, ' +
          'sql/views/<name>.sql, src/{api,plan}/, src/..., [ops](operations.md#accounts), /srv/adops/src/gone.ts, ' +
          '11,000 jobs/s and `sql/${file}`.',
      ),
    ).toEqual([]);
  });

  it('fails on a command, subcommand or flag the CLI lacks, in code only', () => {
    expect(check('Run `adops backfill --from D --to D --wait`.')).toEqual([]);
    expect(check('Run `adops backfil --from D`.')).toEqual([
      '`adops backfil --from D`: adops has no command backfil',
    ]);
    expect(check('```sh\nadops backfill --from D \\\n  --oldest-first | tee log\n```')).toEqual([
      '`adops backfill --from D --oldest-first`: adops backfill has no --oldest-first',
    ]);
    expect(check('`adops accounts rename a b --dry-run`, `adops accounts move a b`')).toEqual([
      '`adops accounts move a b`: adops accounts has no subcommand move',
    ]);
    expect(check('`adops --version`, `adops --verbose`')).toEqual([
      '`adops --verbose`: adops has no --verbose',
    ]);
    expect(check('the adops worker, `adops-export`, `/run/secrets/adops`, `adops <command> --help`')).toEqual(
      [],
    );
  });

  it('fails on an ADOPS_* variable nothing reads; a family prefix counts when a member exists', () => {
    expect(check('Set ADOPS_SCHEMA and `ADOPS_HTTP_*`; ADOPS_HTTP_ too.')).toEqual([]);
    expect(check('Set `ADOPS_BIG_BODY_MB=9`.')).toEqual([
      'names ADOPS_BIG_BODY_MB, which src/platform/config/env.ts does not read',
    ]);
  });

  it('lets an allowed name pass only in its file', () => {
    const allowed = [{ file: 'docs/x.md', text: 'ADOPS_KEY_SOUTH', why: 'an example' }];
    expect(checkDoc('docs/x.md', 'api_key_env: ADOPS_KEY_SOUTH', fixture, allowed)).toEqual([]);
    expect(checkDoc('docs/y.md', 'api_key_env: ADOPS_KEY_SOUTH', fixture, allowed)).toHaveLength(1);
  });

  it("finds a variable missing from README's Configuration section, and reads a family row", () => {
    const readme =
      '## Configuration\n| `ADOPS_SCHEMA` | x |\n| `ADOPS_HTTP_CONNECT_TIMEOUT_MS` / `_BODY_TIMEOUT_MS` | y |\n## Next\nADOPS_QUEUE\n';
    expect(
      undocumentedVariables(readme, [
        'ADOPS_SCHEMA',
        'ADOPS_HTTP_CONNECT_TIMEOUT_MS',
        'ADOPS_HTTP_BODY_TIMEOUT_MS',
        'ADOPS_QUEUE',
      ]),
    ).toEqual(['ADOPS_QUEUE']);
  });

  it('reads the variable names a source uses, not its constants or comments', () => {
    const source =
      "// ADOPS_IN_A_COMMENT\nconst MAX_BYTES = 1;\nconst S = { ADOPS_A: z };\nenv.REDIS_B; env['ADOPS_C']; `${x}ADOPS_D`;";
    expect([...variablesNamedIn(source)].sort()).toEqual(['ADOPS_A', 'ADOPS_C', 'REDIS_B']);
  });
});
