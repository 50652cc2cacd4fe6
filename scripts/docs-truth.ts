// What the docs may claim: the paths, `adops` commands and flags, and ADOPS_* variables a markdown file
// names, each checked against the repository. Pure over its inputs (a doc's text and a Truth); read by
// test/unit/docs/docs-truth.test.ts, which builds the Truth from the files, the CLI and src/platform/config/env.ts.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

/** One statement of a doc found false. */
export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/** A command of the CLI: its long flags and its own subcommands. */
export interface CommandShape {
  readonly flags: ReadonlySet<string>;
  readonly subcommands: ReadonlyMap<string, CommandShape>;
}

/** What is true of the repository, against which a doc is checked. */
export interface Truth {
  /** Whether a path relative to the repository root names a file or folder (globs and placeholders allowed). */
  readonly exists: (path: string) => boolean;
  /** The program `adops` itself: its own flags (`--version`) and its commands. */
  readonly program: CommandShape;
  /** The ADOPS_* variables a doc may name. */
  readonly variables: ReadonlySet<string>;
  /** The text of a markdown file by its path from the repository root, to check a link's `#anchor`
   * against its headings; undefined for a file that is not there. Without it anchors go unchecked. */
  readonly markdown?: (path: string) => string | undefined;
}

/** A name a doc may use though the check would call it false, and why. */
export interface Allowed {
  readonly file: string;
  readonly text: string;
  readonly why: string;
}

/** The top folders of the repository whose paths docs name. */
const TOP = ['src', 'test', 'bench', 'scripts', 'sql', 'deploy', 'jobs', 'docs'];
/** A path into one of them: not inside a longer path or URL (`/srv/adops/src/...`, `dist/src/...`). */
const PATH = new RegExp(
  String.raw`(?<![\w.\-/@$~])(?:\./)?((?:${TOP.join('|')})/(?:\{[^}\s]*\}|[^\s\`'"()\[\],;|:#!?{])*)`,
  'g',
);
const VARIABLE = /(?<![\w$])ADOPS_[A-Z0-9_]*[A-Z0-9](?![a-z])(_\*|_(?![A-Za-z0-9]))?/g;
/** `adops <word>` as a command line says it; not `adops-export`, `/secrets/adops`, `adops.yml`, `adops_bi`. */
const COMMAND = /(?<![\w\-/.@$<])adops((?:[ \t]+(?:\\\n[ \t]*)?[^\s|;&>#`]+)*)/g;
/** Where one command of a command line ends: a pipe, a redirection, a sequence, a shell comment. */
const COMMAND_END = /\s(?:\||\|\||&&|;|>|2>|#)\s|\s(?:2>&1|>>?)\S*/;

/** Each code span and each line of a fenced code block of `text`, with the line it starts on. */
export function codeOf(text: string): { readonly code: string; readonly line: number }[] {
  const out: { code: string; line: number }[] = [];
  const lines = text.split('\n');
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      else {
        // A shell line continued with a backslash is one command.
        let code = line;
        const start = i;
        while (code.endsWith('\\') && i + 1 < lines.length) code = `${code.slice(0, -1)} ${lines[++i] ?? ''}`;
        out.push({ code, line: start + 1 });
      }
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    for (const span of line.matchAll(/(`+)(.+?)\1/g)) out.push({ code: span[2] ?? '', line: i + 1 });
  }
  return out;
}

/** The text of `text` outside fenced code blocks is prose, inside them code; paths and variables count in both. */
function linesOf(text: string): string[] {
  return text.split('\n');
}

/** Why the path a doc names does not exist, or undefined when it does (or stands for one that does). */
export function pathProblem(named: string, exists: (path: string) => boolean): string | undefined {
  // `src/...` and `jobs/*` name a folder; a trailing full stop ends the sentence.
  const path = named.replace(/\.{2,}$|\u2026$/, '').replace(/\.$/, '');
  // `jobs/s` is a rate (11,000 jobs/s); `sql/${file}` is code building a path, not naming one.
  if (path === '' || /^[a-z]+\/s$/.test(path) || path.includes('${') || exists(path)) return undefined;
  // A `.js` in an import names the `.ts` it is compiled from; a path may leave its extension out.
  if (path.endsWith('.js') && exists(`${path.slice(0, -3)}.ts`)) return undefined;
  if (!/\.[a-z0-9]+$/i.test(path.split('/').pop() ?? '') && exists(`${path}.*`)) return undefined;
  return `names ${named}, which does not exist`;
}

/** Paths checked against a Truth: every path of TOP a doc names, in prose or code. */
export function pathFindings(file: string, text: string, truth: Truth): Finding[] {
  const out: Finding[] = [];
  linesOf(text).forEach((line, i) => {
    for (const m of line.matchAll(PATH)) {
      const problem = pathProblem(m[1] ?? '', truth.exists);
      if (problem !== undefined) out.push({ file, line: i + 1, what: problem });
    }
  });
  return out;
}

/** Relative links of a doc (`[x](docs/a.md#b)`, `[x](../src/y.ts)`, `[x](#c)`) whose target, or whose
 * `#anchor` in a markdown target, does not exist. */
export function linkFindings(file: string, text: string, truth: Truth): Finding[] {
  const out: Finding[] = [];
  linesOf(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target = '', anchor] = (m[1] ?? '').split('#');
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const path =
        target === ''
          ? file
          : normalize(join(dirname(file), target))
              .replace(/\\/g, '/')
              .replace(/\/$/, '');
      if (target !== '' && (path.startsWith('..') || !truth.exists(path)))
        out.push({ file, line: i + 1, what: `links to ${m[1]}, which does not exist` });
      else if (anchor !== undefined && path.endsWith('.md') && truth.markdown !== undefined) {
        const target = path === file ? text : truth.markdown(path);
        if (target !== undefined && !headingAnchors(target).has(anchor))
          out.push({ file, line: i + 1, what: `links to ${m[1]}, but ${path} has no heading #${anchor}` });
      }
    }
  });
  return out;
}

/** The anchors GitHub gives a markdown file's headings: lower case, punctuation dropped, spaces as
 * hyphens, a repeated one suffixed `-1`, `-2`, ... Headings inside fenced code are not headings. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const code = new Set(codeBlockLines(text));
  text.split('\n').forEach((line, i) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined || code.has(i)) return;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  });
  return anchors;
}

/** The 0-based numbers of the lines inside fenced code blocks (fences included). */
function codeBlockLines(text: string): number[] {
  const inside: number[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (
      fence !== undefined &&
      marker !== undefined &&
      marker[0] === fence[0] &&
      marker.length >= fence.length
    )
      fence = undefined;
    else if (fence === undefined) return;
    inside.push(i);
  });
  return inside;
}

/** The `adops` commands and flags named in a doc's code that the CLI does not have. */
export function commandFindings(file: string, text: string, truth: Truth): Finding[] {
  const out: Finding[] = [];
  for (const { code, line } of codeOf(text))
    for (const m of code.matchAll(COMMAND)) {
      const words = (m[1] ?? '').split(COMMAND_END)[0]?.trim().split(/\s+/).filter(Boolean) ?? [];
      for (const what of commandLineProblems(words, truth.program))
        out.push({ file, line, what: `\`adops ${words.join(' ')}\`: ${what}` });
    }
  return out;
}

/** What is wrong with `adops <words>`: an unknown command or subcommand, or a flag the command lacks. */
export function commandLineProblems(words: readonly string[], program: CommandShape): string[] {
  const problems: string[] = [];
  let shape = program;
  let name = 'adops';
  let i = 0;
  // Flags before the command are the program's own (`adops --version`); `adops --help` is always there.
  for (; i < words.length && (words[i] ?? '').startsWith('-'); i++) {
    const flag = flagOf(words[i] ?? '');
    if (flag !== undefined && !hasFlag(program, flag)) problems.push(`adops has no ${flag}`);
  }
  const first = words[i];
  // `adops <command>`, `adops ...`, `adops [options]`: a placeholder or the prose's ellipsis, not a command.
  if (first === undefined || !/^[a-z][a-z0-9-]*$/.test(first)) return problems;
  const command = program.subcommands.get(first);
  if (command === undefined) return [...problems, `adops has no command ${first}`];
  shape = command;
  name = `adops ${first}`;
  const sub = words[i + 1];
  if (shape.subcommands.size > 0 && sub !== undefined && /^[a-z][a-z0-9-]*$/.test(sub)) {
    const subShape = shape.subcommands.get(sub);
    if (subShape === undefined) problems.push(`${name} has no subcommand ${sub}`);
    else {
      shape = subShape;
      name = `${name} ${sub}`;
      i++;
    }
  }
  for (const word of words.slice(i + 1))
    for (const flag of word.match(/(?<![\w-])--[a-z][a-z0-9-]*/g) ?? [])
      if (!hasFlag(shape, flag)) problems.push(`${name} has no ${flag}`);
  return problems;
}

function flagOf(word: string): string | undefined {
  return /^--[a-z][a-z0-9-]*/.exec(word)?.[0];
}

function hasFlag(shape: CommandShape, flag: string): boolean {
  return flag === '--help' || shape.flags.has(flag);
}

/** ADOPS_* variables a doc names that nothing reads; `ADOPS_HTTP_*` and `ADOPS_HTTP_` name a family. */
export function variableFindings(file: string, text: string, truth: Truth): Finding[] {
  const out: Finding[] = [];
  linesOf(text).forEach((line, i) => {
    for (const m of line.matchAll(VARIABLE)) {
      const name = m[0].replace(/\*$/, '');
      const known = name.endsWith('_')
        ? [...truth.variables].some((v) => v.startsWith(name))
        : truth.variables.has(name);
      if (!known)
        out.push({
          file,
          line: i + 1,
          what: `names ${m[0]}, which src/platform/config/env.ts does not read`,
        });
    }
  });
  return out;
}

/** Every finding of a doc, less those `allowed` lets it keep. */
export function checkDoc(
  file: string,
  text: string,
  truth: Truth,
  allowed: readonly Allowed[] = [],
): Finding[] {
  return [
    ...pathFindings(file, text, truth),
    ...linkFindings(file, text, truth),
    ...commandFindings(file, text, truth),
    ...variableFindings(file, text, truth),
  ].filter((f) => !allowed.some((a) => a.file === f.file && f.what.includes(a.text)));
}

/** The variables of `read` that `readme`'s Configuration section does not name. */
export function undocumentedVariables(readme: string, read: Iterable<string>): string[] {
  const section = /^## Configuration\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
  // A row may name a family's members by their tails: `ADOPS_HTTP_CONNECT_TIMEOUT_MS` / `_HEADERS_TIMEOUT_MS`.
  const tails = new Set(section.match(/(?<![\w$])_[A-Z0-9_]*[A-Z0-9]/g) ?? []);
  const documented = (name: string) =>
    new RegExp(`(?<![\\w$])${name}(?![\\w])`).test(section) ||
    [...tails].some((tail) => name.endsWith(tail) && section.includes(name.slice(0, -tail.length + 1)));
  return [...read].filter((name) => !documented(name));
}

/** A Truth's `exists` over the files under `root`: a path, or a pattern with `*`, `<placeholder>` or `{a,b}`. */
export function existsUnder(root: string): (path: string) => boolean {
  return (path) => {
    const segments = path.replace(/\/$/, '').split('/');
    const walk = (dir: string, rest: readonly string[]): boolean => {
      const [head, ...tail] = rest;
      if (head === undefined) return true;
      if (!/[*<{]/.test(head)) {
        const next = join(dir, head);
        return existsSync(next) && (tail.length === 0 || statSync(next).isDirectory()) && walk(next, tail);
      }
      const pattern = new RegExp(`^${segmentPattern(head)}$`);
      if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
      return readdirSync(dir).some(
        (entry) =>
          pattern.test(entry) &&
          (tail.length === 0 || statSync(join(dir, entry)).isDirectory()) &&
          walk(join(dir, entry), tail),
      );
    };
    return walk(root, segments);
  };
}

function segmentPattern(segment: string): string {
  let out = '';
  for (const part of segment.split(/(\*+|<[^>]*>|\{[^}]*\})/))
    if (part === '') continue;
    else if (part.startsWith('*')) out += '.*';
    else if (part.startsWith('<')) out += '.+';
    else if (part.startsWith('{'))
      out += `(?:${part
        .slice(1, -1)
        .split(',')
        .map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|')})`;
    else out += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return out;
}

/** A variable's name: upper case words joined by underscores (ADOPS_SCHEMA, REDIS_URL, LOG_LEVEL). */
const VARIABLE_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/** The variable names a TypeScript source reads: the property names (`env.X`, `{ X: schema }`) and string
 * literals (`env['X']`, `['X', 'Y'] as const`) of that form, outside comments. Constants' own names
 * (`MAX_KEY_FILE_BYTES`) are identifiers, not property names, and so never count. */
export function variablesNamedIn(source: string): Set<string> {
  const file = ts.createSourceFile('env.ts', source, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    const name =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isPropertyAccessExpression(node)
          ? node.name.text
          : (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
              ts.isIdentifier(node.name)
            ? node.name.text
            : undefined;
    if (name !== undefined && VARIABLE_NAME.test(name)) found.add(name);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}
