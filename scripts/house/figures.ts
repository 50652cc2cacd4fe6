// The house's figures, read from src/ with the TypeScript parser: lines, casts, error classes,
// functions that take a (pool|client, schema) pair, and SQL text outside the SQL modules. Printed by
// `npx tsx scripts/house/figures.ts`; held to the house's limits by test/unit/house.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

export interface HouseFigures {
  readonly files: number;
  readonly lines: number;
  readonly casts: readonly Finding[];
  readonly doubleCasts: readonly Finding[];
  readonly errorClasses: readonly Finding[];
  readonly poolSchemaSignatures: readonly Finding[];
  readonly sqlOutsideModules: readonly Finding[];
}

/** A module of SQL builders: `sql.ts`, or a file ending `-sql.ts`, in any folder of src/. */
export function isSqlModule(file: string): boolean {
  return /(^|\/)(sql|[a-z-]+-sql)\.ts$/.test(file);
}

/** A string or template that is SQL: a statement keyword at its start (after whitespace). */
export function looksLikeSql(text: string): boolean {
  return /^\s*(SELECT|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|CREATE\s|ALTER\s|DROP\s|COMMENT\s+ON|GRANT\s|REVOKE\s|LOCK\s|WITH\s+\S+\s+AS|TRUNCATE\s|SET\s+(LOCAL\s+)?[a-z_]+\s*(=|TO)|COPY\s|LISTEN\s|NOTIFY\s|SELECT$)/.test(
    text,
  );
}

const DB_TYPES = new Set([
  'Pool',
  'PoolClient',
  'ClientBase',
  'Client',
  'Queryable',
  'pg.Pool',
  'pg.PoolClient',
  'pg.ClientBase',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))
    .sort();
}

/** The figures of the .ts files under `srcDir`. */
export function houseFigures(root: string, srcDir = 'src'): HouseFigures {
  const casts: Finding[] = [];
  const doubleCasts: Finding[] = [];
  const errorClasses: Finding[] = [];
  const poolSchema: Finding[] = [];
  const sql: Finding[] = [];
  let lines = 0;
  const files = sourceFiles(join(root, srcDir));
  for (const path of files) {
    const file = relative(root, path);
    const text = readFileSync(path, 'utf8');
    lines += text.split('\n').filter((l) => l.trim() !== '').length;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const at = (node: ts.Node): Finding => ({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      text: node.getText().split('\n')[0]?.slice(0, 120) ?? '',
    });
    const visit = (node: ts.Node): void => {
      if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
        const isConst = ts.isTypeReferenceNode(node.type) && node.type.getText() === 'const';
        if (!isConst) casts.push(at(node));
        const inner = ts.isParenthesizedExpression(node.expression)
          ? node.expression.expression
          : node.expression;
        if (ts.isAsExpression(inner) && inner.type.kind === ts.SyntaxKind.UnknownKeyword)
          doubleCasts.push(at(node));
      }
      if (ts.isClassDeclaration(node) && node.heritageClauses !== undefined) {
        const base = node.heritageClauses.flatMap((h) => h.types.map((t) => t.expression.getText()));
        if (base.some((b) => /Error$/.test(b)))
          errorClasses.push({ ...at(node), text: node.name?.text ?? '?' });
      }
      if (ts.isFunctionLike(node)) {
        const params = node.parameters;
        const hasSchema = params.some((p) => p.name.getText() === 'schema');
        const hasDb = params.some((p) => p.type !== undefined && DB_TYPES.has(p.type.getText()));
        // The handle's own constructor is where a pool and a schema become the one handle.
        const isHandle = file.endsWith('platform/pg/handle.ts') && node.name?.getText() === 'warehouseOf';
        if (hasSchema && hasDb && !isHandle) poolSchema.push(at(node));
      }
      if (
        !isSqlModule(file) &&
        (ts.isNoSubstitutionTemplateLiteral(node) ||
          ts.isStringLiteral(node) ||
          ts.isTemplateExpression(node))
      ) {
        const raw = ts.isTemplateExpression(node) ? node.head.text : node.text;
        if (looksLikeSql(raw)) sql.push(at(node));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return {
    files: files.length,
    lines,
    casts,
    doubleCasts,
    errorClasses,
    poolSchemaSignatures: poolSchema,
    sqlOutsideModules: sql,
  };
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const figures = houseFigures(process.cwd());
  const byFolder = (list: readonly Finding[]): string =>
    Object.entries(
      list.reduce<Record<string, number>>((acc, f) => {
        const folder = f.file.split('/').slice(1, 2).join('/');
        acc[folder] = (acc[folder] ?? 0) + 1;
        return acc;
      }, {}),
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const perK = (n: number): string => ((n * 1000) / figures.lines).toFixed(1);
  console.log(`files ${figures.files}, non-blank lines ${figures.lines}`);
  console.log(
    `casts ${figures.casts.length} (${perK(figures.casts.length)} per 1,000 lines): ${byFolder(figures.casts)}`,
  );
  console.log(`double casts ${figures.doubleCasts.length}`);
  console.log(
    `error classes ${figures.errorClasses.length}: ${figures.errorClasses.map((f) => f.text).join(', ')}`,
  );
  console.log(
    `(pool|client, schema) signatures ${figures.poolSchemaSignatures.length}: ${byFolder(figures.poolSchemaSignatures)}`,
  );
  console.log(
    `SQL outside SQL modules ${figures.sqlOutsideModules.length}: ${byFolder(figures.sqlOutsideModules)}`,
  );
  if (process.argv.includes('--list'))
    for (const [name, list] of Object.entries({
      casts: figures.casts,
      poolSchema: figures.poolSchemaSignatures,
      sql: figures.sqlOutsideModules,
    }))
      for (const f of list) console.log(`${name} ${f.file}:${f.line} ${f.text}`);
}
