// Reads a small configuration file (a job definition, the API key) only when it is a regular file
// within a size limit: a mistaken path to a huge file, /dev/zero or a FIFO is refused at once
// instead of being read into memory for ever or waited on.
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';

/** Why a file was not read: the text completes "<path>: ...". */
export class FileRefused extends Error {
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
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
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
