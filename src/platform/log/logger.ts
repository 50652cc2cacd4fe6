// The pino logger every process uses: JSON lines by default, pretty on a terminal, and the secrets
// of the configuration redacted from every logged field, path and message.
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { redactSecrets } from './redact.js';
import { matcherOf } from './secret-pattern.js';

/** pino-pretty (30 modules), loaded only by a process that logs to a terminal. */
const pretty = (options: PinoPretty.PrettyOptions): NodeJS.WritableStream =>
  (createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty)(options);

export type { Logger } from 'pino';

export interface LoggerOptions {
  readonly level: string;
  /** Strings that must never leave the process in a log line (the API key). */
  readonly secrets: readonly string[];
  /** Where lines go; stderr by default, so stdout stays clean for command output. */
  readonly destination?: NodeJS.WritableStream & { isTTY?: boolean };
  readonly pretty?: boolean; // Human-readable output; by default when the destination is a terminal.
}

/** Header and field names whose values are secrets wherever they sit in a logged object. */
const REDACT_PATHS = ['apiKey', 'headers.authorization', 'headers["x-api-key"]', 'authorization'].flatMap(
  (path) => [path, `*.${path}`],
);

/** A pino logger whose every line passes through a filter that replaces the secrets, so the key cannot
 * leak through a message, an error stack, a URL or job data, whichever path it took. */
export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? process.stderr;
  const usePretty = options.pretty ?? destination.isTTY === true;
  const target: NodeJS.WritableStream = usePretty
    ? pretty({ destination, colorize: destination.isTTY === true, sync: true })
    : destination;
  const secrets = matcherOf(options.secrets);
  const filtered = new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      const line = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      target.write(redactSecrets(line, secrets));
      done();
    },
  });
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    filtered,
  );
}
