// Config YAML parsing: a syntax error is a ConfigError in our words, never quoting the file (keys in it).
import { parse as parseYaml, YAMLParseError, type ErrorCode } from 'yaml';
import { ConfigError } from './files.js';

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

/** What is wrong with YAML the parser refused, as ` at line L, column C: <what>`, never quoting it. */
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

/** Parses YAML `text`; a syntax error is a ConfigError, no cause (a logged one would print an excerpt). */
export function parseConfigYaml(text: string, where: string, subject: string): unknown {
  try {
    // logLevel 'error': the default 'warn' prints warnings, excerpt and all, through process.emitWarning.
    return parseYaml(text, { logLevel: 'error' });
  } catch (error) {
    throw new ConfigError(`${where}: not valid YAML${yamlProblem(error)}`, subject);
  }
}

/** True for a YAML value that is a whole number from `min` to `max`. */
export function isWhole(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
