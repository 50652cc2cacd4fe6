// `adops --help` must not load the product: the static imports reachable from the CLI's entry
// reach no package but commander, and each command's module is loaded only when it runs.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { SUMMARIES, type CliContext } from '../../../src/cli/context.js';
import { commandOf, COMMANDS, registerCommands } from '../../../src/cli/main.js';

const root = join(import.meta.dirname, '..', '..', '..');

/** The modules `file` imports for their values (type-only imports and import() excluded). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const out: string[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const allTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.every((e) => e.isTypeOnly);
      if (!allTypes) out.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && !node.isTypeOnly) {
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

/** Every package reached through value imports from `entry`, following relative imports. */
function packagesReached(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of valueImports(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(entry);
  return packages;
}

describe('the adops CLI loads commands lazily', () => {
  it('reaches no package but commander from its entry point', () => {
    expect([...packagesReached(join(root, 'src', 'cli', 'main.ts'))]).toEqual(['commander']);
  });

  it('would see a package reached through a command module (the check is not vacuous)', () => {
    const reached = packagesReached(join(root, 'src', 'cli', 'status.ts'));
    expect(reached.has('pg') || reached.has('bullmq')).toBe(true);
  });

  it('finds the command in the arguments, after options and after help', () => {
    expect(commandOf(['status'])).toBe('status');
    expect(commandOf(['--help'])).toBeUndefined();
    expect(commandOf([])).toBeUndefined();
    expect(commandOf(['backfill', '--from', '2026-01-01'])).toBe('backfill');
    expect(commandOf(['help', 'pull'])).toBe('pull');
    expect(commandOf(['nope'])).toBeUndefined();
    expect(commandOf(['toString'])).toBeUndefined();
  });

  it('lists every command with its summary, and registers the chosen one in full', async () => {
    let contexts = 0;
    const context = async () => {
      contexts++;
      return {} as CliContext;
    };
    const listing = new Command('adops');
    await registerCommands(listing, ['--help'], context);
    expect(listing.commands.map((c) => c.name())).toEqual(Object.keys(COMMANDS));
    expect(listing.commands.map((c) => c.description())).toEqual(Object.values(SUMMARIES));
    expect(contexts).toBe(0);

    const full = new Command('adops');
    await registerCommands(full, ['backfill', '--from', '2026-01-01'], context);
    const backfill = full.commands.find((c) => c.name() === 'backfill');
    expect(backfill?.options.map((o) => o.long)).toContain('--from');
    expect(backfill?.description()).toBe(SUMMARIES.backfill);
    expect(full.commands.find((c) => c.name() === 'status')?.options).toEqual([]);
    expect(contexts).toBe(1);
  });

  it('registers each command under its own name', async () => {
    for (const [name, load] of Object.entries(COMMANDS)) {
      const program = new Command('adops');
      (await load())(program, {} as CliContext);
      expect(program.commands.map((c) => c.name())).toEqual([name]);
    }
  });
});
