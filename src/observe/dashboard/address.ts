// Addresses shown to the user: the page URL to open, and whether a bind address is private.

/**
 * The URL a browser opens for a server listening on `host:port`. A wildcard bind address is not
 * openable, so it becomes the loopback of the same family; IPv6 literals get brackets.
 */
export function dashboardUrl(host: string, port: number): string {
  let shown = host;
  if (host === '0.0.0.0' || host === '') shown = '127.0.0.1';
  else if (host === '::' || host === '[::]') shown = '[::1]';
  else if (host.includes(':') && !host.startsWith('[')) shown = `[${host}]`;
  return `http://${shown}:${port}/`;
}

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
