// Full checks of the DATABASE_URL, REDIS_URL and ADOPS_BASE_URL forms, so a malformed one is refused at start in one
// line, instead of pg or ioredis throwing a stack trace later or silently reading it otherwise
// (ioredis takes `redis://host/abc` as database 0).

/** The form REDIS_URL must have, as the error message states it. */
export const REDIS_URL_FORM = 'redis:// or rediss://[[user]:password@]host[:port][/database number]';

/** The form DATABASE_URL must have, as the error message states it. */
export const DATABASE_URL_FORM =
  'postgres:// or postgresql://[user[:password]@][host][:port][/database][?sslmode=...]';

/** The form ADOPS_BASE_URL must have, as the error message states it. */
export const BASE_URL_FORM = 'an http(s) URL ending in /v2, e.g. https://acme.api.example.com/v2';

/** What is wrong with an ADOPS_BASE_URL, or undefined when it reads as written. */
export function baseUrlProblem(value: string): string | undefined {
  const url = parse(value);
  if (typeof url === 'string') return url;
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `the scheme "${url.protocol}" is not http: or https:`;
  const shared = authorityProblem(url, value);
  if (shared !== undefined) return shared;
  // The parser's reading, not the text: `https:///v2` is host "v2" with path "/".
  if (!/\/v2\/?$/.test(url.pathname) || url.search !== '')
    return `the URL is read as ${url.origin}${url.pathname}${url.search}, which does not end in /v2`;
  if (url.username !== '' || url.password !== '')
    return 'no user or password in the URL: the key goes in ADOPS_API_KEY or ADOPS_API_KEY_FILE';
  return undefined;
}

/** The sslmode values node-postgres understands (libpq's `allow` it would read as `require`). */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** What is wrong with a REDIS_URL, or undefined when ioredis will read it as written. */
export function redisUrlProblem(value: string): string | undefined {
  const url = parse(value);
  if (typeof url === 'string') return url;
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return `the scheme "${url.protocol}" is not redis: or rediss:`;
  const shared = authorityProblem(url, value) ?? encodingProblem(url.username, 'user name');
  if (shared !== undefined) return shared;
  if (url.hostname === '') return 'it names no host';
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !isDatabaseNumber(db)) return `the database "${db}" is not a whole number such as 0`;
  return redisQueryProblem(url.searchParams, db !== '') ?? encodingProblem(url.password, 'password');
}

/** The query parameters of a REDIS_URL that are honoured: where to connect, nothing else. */
const REDIS_QUERY = ['db', 'family'];

/**
 * What is wrong with a REDIS_URL's query. ioredis turns every query parameter into a client
 * option, as a string (`?tls=true` switches TLS on with an option named "profile",
 * `?maxRetriesPerRequest=0` would override ours): only `db` and `family` (IP version) are read.
 */
function redisQueryProblem(query: URLSearchParams, pathDb: boolean): string | undefined {
  for (const name of new Set(query.keys())) {
    if (!REDIS_QUERY.includes(name))
      return (
        `the query parameter "${name}" is not read: only db and family are ` +
        '(TLS is rediss://, the user and password go before the host)'
      );
  }
  const dbs = query.getAll('db');
  if (dbs.length > 1 || (dbs.length === 1 && pathDb))
    return 'the database is given twice (in the path and as db=, or db= twice): give it once';
  const queryDb = dbs[0];
  if (queryDb !== undefined && !isDatabaseNumber(queryDb))
    return `the database "db=${queryDb}" is not a whole number such as 0`;
  const families = query.getAll('family');
  if (families.length > 1) return 'family is given twice: give it once';
  const family = families[0];
  if (family !== undefined && !['0', '4', '6'].includes(family))
    return `family "${family}" is not 0, 4 or 6 (any, IPv4 or IPv6)`;
  return undefined;
}

/** What is wrong with a DATABASE_URL, or undefined when node-postgres will read it as written. */
export function postgresUrlProblem(value: string): string | undefined {
  const url = parse(value);
  if (typeof url === 'string') return url;
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return `the scheme "${url.protocol}" is not postgres: or postgresql:`;
  // An empty host is allowed: libpq then uses the local socket (or the `host` parameter).
  const shared =
    authorityProblem(url, value) ??
    encodingProblem(url.username, 'user name') ??
    encodingProblem(url.password, 'password');
  if (shared !== undefined) return shared;
  const database = url.pathname.replace(/^\//, '');
  const decoded = encodingProblem(database, 'database name');
  if (decoded !== undefined) return decoded;
  if (database.includes('/')) return `the database name "${database}" holds a /`;
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !SSL_MODES.includes(sslmode))
    return `sslmode "${sslmode}" is not one of: ${SSL_MODES.join(', ')}`;
  const port = url.searchParams.get('port');
  if (port !== null && !isPort(port)) return `the port ${port} is not from 1 to 65535`;
  return undefined;
}

/**
 * `value` with the password of a URL's user info replaced by `***`, for messages: also for text that
 * is not a valid URL, since that is when the message shows it.
 */
export function withoutPassword(value: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(value);
  if (scheme === null) return value;
  const start = scheme[0].length;
  const end = value.slice(start).search(/[/?#]/);
  const authority = end === -1 ? value.slice(start) : value.slice(start, start + end);
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  const shown =
    at === -1 || colon === -1 || colon > at
      ? value
      : value.slice(0, start + colon + 1) + '***' + value.slice(start + at);
  return withoutSecretParameters(shown);
}

/** Query parameters whose values are credentials (libpq's password, a key or token). */
const SECRET_PARAMETER = /pass|secret|token|key|auth|cred/i;

/** `value` with the values of its credential query parameters replaced by `***`. */
function withoutSecretParameters(value: string): string {
  return value.replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, sep: string, name: string) =>
    SECRET_PARAMETER.test(name) ? `${sep}${name}=***` : whole,
  );
}

function parse(value: string): URL | string {
  try {
    return new URL(value);
  } catch {
    return 'it is not a valid URL (check the host, the port and the brackets round an IPv6 address)';
  }
}

/** Problems the two URL forms share: a port out of range, a fragment. */
function authorityProblem(url: URL, value: string): string | undefined {
  if (url.port !== '' && !isPort(url.port)) return `the port ${url.port} is not from 1 to 65535`;
  if (url.hash !== '' || value.includes('#')) return 'it has a fragment (#...); percent-encode a # as %23';
  return undefined;
}

function encodingProblem(part: string, what: string): string | undefined {
  try {
    decodeURIComponent(part);
    return undefined;
  } catch {
    return `bad percent-encoding in the ${what} (write % as %25)`;
  }
}

function isPort(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65_535;
}

function isDatabaseNumber(text: string): boolean {
  return /^\d{1,9}$/.test(text);
}
