/**
 * Why the dashboard could not start. `reason` tells the CLI which exit code fits: `address` is
 * fixed by another --port/--host (usage, exit 2); `redis` by starting Redis or fixing REDIS_URL
 * (the work failed, exit 1). The message already says what to do next.
 */
export class DashboardError extends Error {
  override readonly name = 'DashboardError';
  constructor(
    message: string,
    readonly reason: 'address' | 'redis',
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
  return new DashboardError(`cannot listen on ${where} (${code}): ${hint}`, 'address', { cause: error });
}

/** The message for a Redis that does not answer at start. */
export function redisFailure(location: string, error: unknown): DashboardError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message ?? 'error';
  return new DashboardError(
    `Redis at ${location} is not reachable (${code}): start Redis or set REDIS_URL to a running one`,
    'redis',
    { cause: error },
  );
}
