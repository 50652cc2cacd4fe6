/**
 * The dashboard cannot listen where it was asked to. Fixed by another --port or --host, so the CLI
 * treats it as bad usage (exit 2); the message says which.
 */
export class DashboardError extends Error {
  override readonly name = 'DashboardError';
  constructor(
    message: string,
    /** The errno code of the failed listen(), e.g. EADDRINUSE. */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The message for a listen() failure, with the fix for the usual codes. */
export function listenFailure(host: string, port: number, error: unknown): DashboardError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  const where = `${host}:${port}`;
  const hint =
    code === 'EADDRINUSE'
      ? `port ${port} is already in use: choose another with --port (0 picks a free one)`
      : code === 'EACCES'
        ? `port ${port} needs privileges: choose a port above 1023 with --port`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `${host} is not an address of this machine: use --host 127.0.0.1 (or 0.0.0.0 for all)`
          : `check --host and --port`;
  return new DashboardError(`cannot listen on ${where} (${code}): ${hint}`, code, { cause: error });
}
