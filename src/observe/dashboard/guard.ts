// What keeps a web page from driving the dashboard through its visitor's browser. The page has no
// login, so a browser that can reach it is trusted; two attacks borrow such a browser:
// - DNS rebinding: a page on rebind.evil.example re-resolves its own name to 127.0.0.1, and is then
//   same-origin with the dashboard. Only the Host header gives it away, so every request (reads
//   too: job data) must name an address the dashboard serves.
// - Cross-site requests: any page can make the browser POST a form or text/plain. Browsers mark
//   them (Sec-Fetch-Site, Origin, Referer), so a write must carry no sign of another origin, and
//   a body that is JSON (which no form can send, and a script of another origin only after a CORS
//   preflight this server never answers). A request with none of those headers is not from a
//   browser page (curl, a script) and is let through, as Go's http.CrossOriginProtection does.
// Pure: the server passes each request's headers.
import { isIP } from 'node:net';

/** The names a Host header may give for this dashboard. */
export interface HostRules {
  /** The address it listens on (--host). */
  readonly bind: string;
  /** Further names it is reached by: a DNS name, a proxy's name (--allowed-host). */
  readonly extra: readonly string[];
}

/** The parts of a request the checks read; header names lower-case, as node:http gives them. */
export interface GuardedRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Why a request is refused: the status to answer and one line saying why. */
export interface Refusal {
  readonly status: 403 | 415;
  readonly message: string;
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
const HOST_HEADER = /^(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const WILDCARDS: ReadonlySet<string> = new Set(['', '0.0.0.0', '::', '[::]']);

/** A host name as compared: lower case, no trailing dot, IPv6 without brackets. */
export function hostKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
}

/**
 * The `host[:port]` of a Host header as a URL would write it (lower case, no default port), or
 * undefined when it is not one.
 */
function normalHost(header: string): URL | undefined {
  if (!HOST_HEADER.test(header)) return undefined;
  try {
    return new URL(`http://${header}`);
  } catch {
    return undefined;
  }
}

/** Whether `hostname` (from a Host header) names this dashboard under `rules`. */
export function servesHost(hostname: string, rules: HostRules): boolean {
  const name = hostKey(hostname);
  // The browser itself resolves these to this machine, never DNS: no page can rebind them.
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  if (isIP(name) === 4 && name.startsWith('127.')) return true;
  const bind = hostKey(rules.bind);
  // An IP address cannot be rebound either: a page whose origin is this IP came from this server.
  // Listening on every interface, any of this machine's addresses (or a port mapping's) may be used.
  if (isIP(name) !== 0 && (WILDCARDS.has(rules.bind) || name === bind)) return true;
  return name === bind || rules.extra.some((extra) => hostKey(extra) === name);
}

/** The one value of a header, or undefined when absent (node:http joins repeated ones it knows). */
function header(req: GuardedRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `host[:port]` of an Origin or Referer URL, or undefined when it has none (`null`, junk). */
function hostOfUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : undefined;
  } catch {
    return undefined;
  }
}

/** Why `req` must be refused under `rules`, or undefined when it may go on to Bull Board. */
export function refusal(req: GuardedRequest, rules: HostRules): Refusal | undefined {
  const hostHeader = header(req, 'host') ?? '';
  const host = normalHost(hostHeader);
  if (host === undefined || !servesHost(host.hostname, rules))
    return {
      status: 403,
      message:
        `Host ${hostHeader === '' ? '(none)' : hostHeader} is not an address of this dashboard (a DNS rebinding page?): ` +
        `open it by its listening address or localhost, or start it with --allowed-host NAME for the name you use`,
    };
  if (SAFE_METHODS.has(req.method.toUpperCase())) return undefined;

  const crossSite = (what: string): Refusal => ({
    status: 403,
    message: `cross-site write refused (${what}): actions must come from the dashboard's own page`,
  });
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return crossSite(`Sec-Fetch-Site: ${site}`);
  const origin = header(req, 'origin');
  if (origin !== undefined) {
    if (hostOfUrl(origin) !== host.host) return crossSite(`Origin ${origin} is not ${host.host}`);
  } else {
    const referer = header(req, 'referer');
    if (referer !== undefined && hostOfUrl(referer) !== host.host)
      return crossSite(`Referer from ${hostOfUrl(referer) ?? 'elsewhere'}, not ${host.host}`);
  }

  const type = header(req, 'content-type');
  const length = header(req, 'content-length');
  const hasBody = header(req, 'transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  const json = type?.split(';')[0]?.trim().toLowerCase() === 'application/json';
  if (type !== undefined ? !json : hasBody)
    return {
      status: 415,
      message: `write requests must send JSON (Content-Type: application/json), not ${type ?? 'a body without a type'}`,
    };
  return undefined;
}
