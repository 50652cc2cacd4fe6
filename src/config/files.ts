// Configuration files and their failures: ConfigError (a bad env var, flag or file: the CLI prints
// it as one line and exits 2), the one guarded way a small config file is read, the one way its
// YAML is parsed (never quoting the file in a message), and where the package's own files are.
import { TerminalError } from '../retry/errors.js';
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats, existsSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError, type ErrorCode } from 'yaml';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A configuration problem: a bad env var, flag or job file. The CLI prints `message` as one line
 * and exits with code 2.
 */
export class ConfigError extends TerminalError {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** What was wrong: the env var, `file: field`, or the flag. */
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(message, { cause: options?.cause });
  }
}

/** Why a file was not read: the text completes "<path>: ...". */
export class FileRefused extends TerminalError {
  override readonly name = 'FileRefused';
  constructor(
    message: string,
    /** The errno code when the file could not be opened or read (ENOENT, EACCES, ...). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * The UTF-8 text of `path`, or FileRefused when it is not a regular file of at most `maxBytes`.
 * `what` names the content for the message ("a job definition"). Reads through one descriptor up
 * to the limit, so a file that grows after the check is still cut there.
 */
export function readBoundedFile(path: string, maxBytes: number, what: string): string {
  const tooBig = (bytes: number) =>
    new FileRefused(
      `${bytes} bytes is over the limit of ${maxBytes} bytes (${maxBytes / 1024} KiB) for ${what}`,
    );
  const check = (stat: Stats) => {
    if (!stat.isFile()) throw new FileRefused(`not a regular file; expected ${what}`);
    if (stat.size > maxBytes) throw tooBig(stat.size);
  };
  let fd: number;
  try {
    // Checked before opening too: opening a FIFO would wait for a writer.
    check(statSync(path));
    fd = openSync(path, 'r');
  } catch (error) {
    if (error instanceof FileRefused) throw error;
    const code = errnoCode(error) ?? 'error';
    throw new FileRefused(`cannot be read (${code})`, code);
  }
  try {
    check(fstatSync(fd));
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) throw tooBig(length);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** What each YAML syntax error means, in words of our own: none quotes the file. */
const YAML_PROBLEMS: Readonly<Record<ErrorCode, string>> = {
  ALIAS_PROPS: 'an alias (*name) cannot carry an anchor or a tag',
  BAD_ALIAS: 'an alias (*name) is not valid',
  BAD_DIRECTIVE: 'a % directive is not valid',
  BAD_DQ_ESCAPE: 'a double-quoted string holds a \\ escape that is not valid; use single quotes',
  BAD_INDENT: 'the indentation is wrong, or a [ or { is not closed',
  BAD_PROP_ORDER: 'an anchor or tag is in the wrong place',
  BAD_SCALAR_START: 'a plain value starts with a reserved character (@ or `); quote the value',
  BLOCK_AS_IMPLICIT_KEY: 'a plain value holds ": " (quote the value), or a mapping is nested on one line',
  BLOCK_IN_FLOW: 'a block value is inside [ ] or { }',
  DUPLICATE_KEY: 'a key is given twice in one mapping',
  IMPOSSIBLE: 'the YAML parser could not read it',
  KEY_OVER_1024_CHARS: 'a key is longer than 1024 characters',
  MISSING_CHAR: 'a closing quote, ] or } is missing, or a , or : between items',
  MULTILINE_IMPLICIT_KEY: 'a key runs over several lines (a ": " missing?)',
  MULTIPLE_ANCHORS: 'a value has more than one anchor',
  MULTIPLE_DOCS: 'it holds more than one YAML document (a --- line)',
  MULTIPLE_TAGS: 'a value has more than one tag',
  NON_STRING_KEY: 'a key is not a plain string',
  RESOURCE_EXHAUSTION: 'aliases expand too far',
  TAB_AS_INDENT: 'a tab is used for indentation; indent with spaces',
  TAG_RESOLVE_FAILED: 'a ! tag is not known',
  UNEXPECTED_TOKEN: 'unexpected text where a key or value belongs',
  BAD_COLLECTION_TYPE: 'a tag does not fit its collection',
};

/** A block scalar header with text after it reads as UNEXPECTED_TOKEN; it has its own advice. */
const BLOCK_HEADER = /^Block scalar header/;

/**
 * What is wrong with YAML the parser refused, as ` at line L, column C: <what>`, never quoting
 * it. Pure; `error` is what `yaml`'s parse threw.
 */
function yamlProblem(error: unknown): string {
  if (error instanceof YAMLParseError) {
    const at = error.linePos?.[0];
    const where = at === undefined ? '' : ` at line ${at.line}, column ${at.col}`;
    const what = BLOCK_HEADER.test(error.message)
      ? 'a block scalar header (| or >) has text after it; start the text on the next line'
      : (YAML_PROBLEMS[error.code] ?? `YAML error ${String(error.code)}`);
    return `${where}: ${what}`;
  }
  // Aliases are resolved after parsing, by a ReferenceError that names the alias.
  if (error instanceof ReferenceError)
    return /^Unresolved alias/.test(error.message)
      ? ': an alias (*name) names no anchor (&name) set before it'
      : ': aliases expand too far';
  return ': the YAML parser could not read it';
}

/**
 * The YAML `text` of the config file `where` names, parsed. A syntax error is a ConfigError
 * `<where>: not valid YAML at line L, column C: <what>` naming `subject`, with no cause attached
 * (a logged cause would print the library's excerpt); warnings (an unknown tag) are not printed.
 */
export function parseConfigYaml(text: string, where: string, subject: string): unknown {
  try {
    // logLevel 'error': the default 'warn' prints warnings, excerpt and all, through process.emitWarning.
    return parseYaml(text, { logLevel: 'error' });
  } catch (error) {
    throw new ConfigError(`${where}: not valid YAML${yamlProblem(error)}`, subject);
  }
}

let root: string | undefined;

/** The folder holding package.json: works from src/ (tsx, vitest) and from dist/src/ alike. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        'adops: cannot find the package root (package.json) above ' + fileURLToPath(import.meta.url),
      );
    dir = up;
  }
  root = dir;
  return dir;
}

/** The shipped sql/ folder of numbered migrations. */
export function sqlDir(): string {
  return join(packageRoot(), 'sql');
}

/** The errno code of a failed file or socket call (ENOENT, EADDRINUSE, ...), when it has one. */
export function errnoCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
