// ConfigError, the guarded read of a small config file, the package's folders; no YAML: the CLI stays light.
import { TerminalError } from '../retry/errors.js';
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A bad env var, flag or config file: the CLI prints `message` as one line and exits with code 2. */
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

/** The UTF-8 text of `path`, or a ConfigError ("<path>: ...", errno error as `cause`) unless a regular file
 * of at most `maxBytes`; one descriptor read up to the limit, so a file growing after the check is cut. */
export function readBoundedFile(path: string, maxBytes: number, what: string): string {
  const tooBig = (bytes: number) =>
    new ConfigError(
      `${bytes} bytes is over the limit of ${maxBytes} bytes (${maxBytes / 1024} KiB) for ${what}`,
      path,
    );
  const check = (stat: Stats) => {
    if (!stat.isFile()) throw new ConfigError(`not a regular file; expected ${what}`, path);
    if (stat.size > maxBytes) throw tooBig(stat.size);
  };
  let fd: number;
  try {
    // Checked before opening too: opening a FIFO would wait for a writer.
    check(statSync(path));
    fd = openSync(path, 'r');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`cannot be read (${errnoCode(error) ?? 'error'})`, path, { cause: error });
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

/** The folder holding package.json: works from src/ (tsx, vitest) and from dist/src/ alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        'adops: cannot find the package root (package.json) above ' + fileURLToPath(import.meta.url),
      );
    dir = up;
  }
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
