// The URL variables checked in full at start (ioredis would read `redis://host/abc` as database 0), and which
// Redis the queues live on: one server, Sentinel or a Cluster. Pure parsing; passwords only in the target.
import { ConfigError } from './files.js';
import { mayHoldKey } from '../log/secret-pattern.js';

// The forms of the URL variables, as error messages state them.
export const REDIS_URL_FORM = 'redis:// or rediss://[[user]:password@]host[:port][/database number]';
export const DATABASE_URL_FORM =
  'postgres:// or postgresql://[user[:password]@][host][:port][/database][?sslmode=...]';
export const BASE_URL_FORM = 'an http(s) URL ending in /v2, e.g. https://acme.api.example.com/v2';

/** What is wrong with an ADOPS_BASE_URL, or undefined when it reads as written. */
export function baseUrlProblem(value: string): string | undefined {
  const url = parse(value);
  if (typeof url === 'string') return url;
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return mayHoldKey(url.protocol)
      ? 'the scheme is not http: or https:'
      : `the scheme "${url.protocol}" is not http: or https:`;
  const shared = authorityProblem(url, value);
  if (shared !== undefined) return shared;
  // A key is often passed in a query string: its parameters are never quoted, names or values.
  if (url.search !== '')
    return 'it has a query string (?...): the URL ends in /v2, and the key goes in ADOPS_API_KEY or ADOPS_API_KEY_FILE';
  // The parser's reading, not the text: `https:///v2` is host "v2" with path "/".
  if (!/\/v2\/?$/.test(url.pathname)) {
    const read = `${url.origin}${url.pathname}`;
    return `the URL is read as ${mayHoldKey(read) ? `a path (not shown: it may hold an API key)` : read}, which does not end in /v2`;
  }
  if (url.username !== '' || url.password !== '')
    return 'no user or password in the URL: the key goes in ADOPS_API_KEY or ADOPS_API_KEY_FILE';
  return undefined;
}

/** The sslmode values node-postgres understands (libpq's `allow` it would read as `require`). */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** What is wrong with a REDIS_URL (either form), or undefined when it reads as written. */
export function redisUrlProblem(value: string): string | undefined {
  if (isSentinelUrl(value)) {
    const parsed = parseSentinelUrl(value);
    return typeof parsed === 'string' ? parsed : undefined;
  }
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

/** What is wrong with a REDIS_URL's query: ioredis makes each parameter a client option, so only two pass. */
function redisQueryProblem(query: URLSearchParams, pathDb: boolean): string | undefined {
  const unread = [...query.keys()].find((name) => !REDIS_QUERY.includes(name));
  if (unread !== undefined)
    return (
      `the query parameter "${unread}" is not read: only db and family are ` +
      '(TLS is rediss://, the user and password go before the host)'
    );
  const [queryDb, ...moreDbs] = query.getAll('db');
  if (moreDbs.length > 0 || (queryDb !== undefined && pathDb))
    return 'the database is given twice (in the path and as db=, or db= twice): give it once';
  if (queryDb !== undefined && !isDatabaseNumber(queryDb))
    return `the database "db=${queryDb}" is not a whole number such as 0`;
  const [family, ...moreFamilies] = query.getAll('family');
  if (moreFamilies.length > 0) return 'family is given twice: give it once';
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

/** Query parameters whose values are credentials (libpq's password, a key or token). */
const SECRET_PARAMETER = /pass|secret|token|key|auth|cred/i;

/** `value` with a URL's password (between the authority's first `:` and its last `@`) and the values of its
 * credential query parameters replaced by `***`, for messages: also when it is not a valid URL. */
export function withoutPassword(value: string): string {
  return value
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#:]*:)[^/?#]*@/, '$1***@')
    .replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, sep: string, name: string) =>
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

interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** The credentials of the data nodes (master, replicas, cluster nodes). */
interface Credentials {
  readonly username: string | undefined;
  readonly password: string | undefined;
}

export type RedisTarget =
  | { readonly kind: 'single'; readonly url: string }
  | (Credentials & {
      readonly kind: 'sentinel';
      readonly sentinels: readonly HostPort[];
      /** The master's name in the sentinels' configuration (`sentinel monitor <name> ...`). */
      readonly master: string;
      readonly sentinelPassword: string | undefined;
      readonly db: number;
    })
  | (Credentials & { readonly kind: 'cluster'; readonly nodes: readonly HostPort[] });

/** The form of the Sentinel URL, as messages state it. */
export const SENTINEL_URL_FORM =
  'redis+sentinel://[[user]:password@]host:port[,host:port...]/master name[/database number]';

/** The form of REDIS_SENTINELS and REDIS_CLUSTER_NODES, as messages state it. */
const NODES_FORM = 'a comma-separated list of host:port, e.g. 10.0.0.1:26379,10.0.0.2:26379';

const MASTER_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const HOST = /^([A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;

/** Every variable readRedisTarget reads besides REDIS_URL, for docs and tests. */
export const REDIS_HA_VARS = [
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_CLUSTER_NODES',
  'REDIS_PASSWORD',
  'REDIS_USERNAME',
] as const;

/** The target the variables describe; `url` is REDIS_URL checked (or its default), `urlSet` whether the user
 * set it: a set REDIS_URL next to REDIS_SENTINELS or REDIS_CLUSTER_NODES is ambiguous. */
export function readRedisTarget(
  env: Readonly<Partial<Record<(typeof REDIS_HA_VARS)[number], string>>>,
  url: string,
  urlSet: boolean,
): RedisTarget {
  const modes = (['REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter((n) => env[n] !== undefined);
  if (modes.length === 2)
    throw new ConfigError(
      'REDIS_SENTINELS and REDIS_CLUSTER_NODES are both set: set only one (Sentinel or Cluster)',
      'REDIS_CLUSTER_NODES',
    );
  const mode = modes[0];
  if (mode !== undefined && urlSet)
    throw new ConfigError(`REDIS_URL and ${mode} are both set: set only one`, 'REDIS_URL');
  const sentinelUrl = isSentinelUrl(url);
  if (env.REDIS_SENTINEL_MASTER !== undefined && mode !== 'REDIS_SENTINELS')
    throw new ConfigError(
      sentinelUrl
        ? 'REDIS_SENTINEL_MASTER is set but REDIS_URL names the master already: set only one'
        : 'REDIS_SENTINEL_MASTER is set without REDIS_SENTINELS: set REDIS_SENTINELS to the sentinels (host:port,...)',
      'REDIS_SENTINEL_MASTER',
    );
  if (env.REDIS_SENTINEL_PASSWORD !== undefined && mode !== 'REDIS_SENTINELS' && !sentinelUrl)
    throw new ConfigError(
      'REDIS_SENTINEL_PASSWORD is set but no Sentinel is configured: set REDIS_SENTINELS or a redis+sentinel:// REDIS_URL',
      'REDIS_SENTINEL_PASSWORD',
    );
  const credentials = (urlCredentials: Credentials): Credentials => {
    for (const name of ['REDIS_PASSWORD', 'REDIS_USERNAME'] as const) {
      if (env[name] === undefined) continue;
      if (mode === undefined && !sentinelUrl)
        throw new ConfigError(
          `${name} is set but REDIS_URL is a plain redis:// URL: put the user and password in REDIS_URL`,
          name,
        );
      const inUrl = name === 'REDIS_PASSWORD' ? urlCredentials.password : urlCredentials.username;
      if (inUrl !== undefined)
        throw new ConfigError(`${name} is set and REDIS_URL holds one too: set only one`, name);
    }
    return {
      username: env.REDIS_USERNAME ?? urlCredentials.username,
      password: env.REDIS_PASSWORD ?? urlCredentials.password,
    };
  };
  const none = { username: undefined, password: undefined };
  if (mode === 'REDIS_CLUSTER_NODES')
    return Object.freeze({
      kind: 'cluster',
      nodes: nodesOf('REDIS_CLUSTER_NODES', env.REDIS_CLUSTER_NODES ?? '', 6379),
      ...credentials(none),
    });
  if (mode === undefined && !sentinelUrl) {
    credentials(none);
    return Object.freeze({ kind: 'single', url });
  }
  const master = env.REDIS_SENTINEL_MASTER;
  if (mode !== undefined && master === undefined)
    throw new ConfigError(
      'REDIS_SENTINEL_MASTER is missing: REDIS_SENTINELS is set, so name the master the sentinels monitor',
      'REDIS_SENTINEL_MASTER',
    );
  if (master !== undefined && !MASTER_NAME.test(master))
    throw new ConfigError(
      `REDIS_SENTINEL_MASTER=${JSON.stringify(master)} is invalid: expected a master name of letters, digits and _ . -`,
      'REDIS_SENTINEL_MASTER',
    );
  const sentinel: ParsedSentinelUrl =
    master !== undefined
      ? { sentinels: nodesOf('REDIS_SENTINELS', env.REDIS_SENTINELS ?? '', 26_379), master, db: 0, ...none }
      : // Already checked: REDIS_URL's schema refuses a Sentinel URL that does not parse.
        (parseSentinelUrl(url) as ParsedSentinelUrl);
  return Object.freeze({
    kind: 'sentinel',
    ...sentinel,
    sentinelPassword: env.REDIS_SENTINEL_PASSWORD,
    ...credentials(sentinel),
  });
}

export function isSentinelUrl(url: string): boolean {
  return /^redis\+sentinel:\/\//i.test(url);
}

interface ParsedSentinelUrl extends Credentials {
  readonly sentinels: readonly HostPort[];
  readonly master: string;
  readonly db: number;
}

/** A redis+sentinel:// URL read, or what is wrong with it. */
function parseSentinelUrl(url: string): ParsedSentinelUrl | string {
  const rest = url.replace(/^redis\+sentinel:\/\//i, '');
  if (/[?#]/.test(rest)) return 'it has a query or a fragment; percent-encode ? as %3F and # as %23';
  const [, authority = '', path = ''] = /^([^/]*)(?:\/([\s\S]*))?$/.exec(rest) ?? [];
  const at = authority.lastIndexOf('@');
  const hosts = authority.slice(at + 1);
  const info = at === -1 ? '' : authority.slice(0, at);
  const colon = info.indexOf(':');
  let username: string | undefined;
  let password: string | undefined;
  try {
    username = decodeURIComponent(colon === -1 ? info : info.slice(0, colon)) || undefined;
    password = (colon === -1 ? undefined : decodeURIComponent(info.slice(colon + 1))) || undefined;
  } catch {
    return 'bad percent-encoding in the user name or password (write % as %25)';
  }
  const sentinels = nodesProblemOrList(hosts, 26_379);
  if (typeof sentinels === 'string') return sentinels;
  const [master, db, ...extra] = path.split('/');
  if (master === undefined || master === '') return 'it names no master after the hosts (/mymaster)';
  if (!MASTER_NAME.test(master)) return `the master name "${master}" is not letters, digits and _ . -`;
  if (extra.length > 0) return `the path has more than a master name and a database number`;
  if (db !== undefined && db !== '' && !isDatabaseNumber(db))
    return `the database "${db}" is not a whole number such as 0`;
  return { sentinels, master, db: db === undefined || db === '' ? 0 : Number(db), username, password };
}

function nodesOf(name: string, value: string, defaultPort: number): readonly HostPort[] {
  const nodes = nodesProblemOrList(value, defaultPort);
  if (typeof nodes === 'string')
    throw new ConfigError(
      `${name}=${JSON.stringify(value)} is invalid: expected ${NODES_FORM}: ${nodes}`,
      name,
    );
  return nodes;
}

/** The host:port list, or what is wrong with it. A missing port is `defaultPort`. */
function nodesProblemOrList(value: string, defaultPort: number): readonly HostPort[] | string {
  const items = value.split(',').map((s) => s.trim());
  if (items.every((s) => s === '')) return 'it names no host';
  const out: HostPort[] = [];
  for (const item of items) {
    if (item === '') return 'it has an empty entry (two commas in a row, or one at an end)';
    if (item.includes('/') || item.includes('@'))
      return `"${item}" is not host:port: give each node's host and port only, no scheme, user or path`;
    const [, host = '', port] = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(item) ?? [];
    if (!HOST.test(host)) return `"${item}" is not host:port (a host name, an IPv4 address or [IPv6])`;
    if (port !== undefined && !isPort(port)) return `the port of "${item}" is not from 1 to 65535`;
    const node = {
      host: host.replace(/^\[|\]$/g, ''),
      port: port === undefined ? defaultPort : Number(port),
    };
    if (out.some((n) => n.host === node.host && n.port === node.port)) return `"${item}" is listed twice`;
    out.push(node);
  }
  return out;
}

/** The target for messages and logs, without any password (`Sentinel master "m" via h1:26379,h2:26379`). */
export function describeRedisTarget(target: RedisTarget): string {
  const list = (nodes: readonly HostPort[]) =>
    nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  switch (target.kind) {
    case 'single':
      return withoutPassword(target.url);
    case 'sentinel':
      return `Sentinel master "${target.master}" via ${list(target.sentinels)}${target.db === 0 ? '' : ` (database ${target.db})`}`;
    case 'cluster':
      return `Cluster ${list(target.nodes)}`;
  }
}

/** The variables a user sets for `target`, for the "check ..." hint of a connection error. */
export function redisVariablesOf(target: RedisTarget): string {
  switch (target.kind) {
    case 'single':
      return 'REDIS_URL';
    case 'sentinel':
      return 'REDIS_SENTINELS/REDIS_SENTINEL_MASTER (or REDIS_URL), REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD';
    case 'cluster':
      return 'REDIS_CLUSTER_NODES and REDIS_PASSWORD';
  }
}

/** BullMQ's key prefix for `prefix` on `target`: hash-tagged on a Cluster so a queue's keys share a slot. */
export function queuePrefixOn(target: RedisTarget, prefix: string): string {
  return target.kind === 'cluster' ? `{${prefix}}` : prefix;
}
