// Real Redis topologies for the high-availability tests, started from the machine's `redis-server`:
// a 3-master Cluster, and a Sentinel setup (a master, a replica, two sentinels). Every node runs
// from a temporary directory with no persistence, on a free port of a range (other things may run
// on the machine), and is killed by its PID in teardown.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** The ports nodes may take: ADOPS_TEST_REDIS_HA_PORTS ("7100-7199" by default). */
function portRange(): { first: number; last: number } {
  const text = process.env.ADOPS_TEST_REDIS_HA_PORTS ?? '7100-7199';
  const m = /^(\d+)-(\d+)$/.exec(text);
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (m === null || !(first >= 1024 && last <= 55_535 && first <= last))
    throw new Error(`ADOPS_TEST_REDIS_HA_PORTS=${text} is not a range such as 7100-7199`);
  return { first, last };
}

const SERVER = 'redis-server';

/** Throws a clear error when `redis-server` (or `redis-cli`) is not on PATH. */
function requireBinary(name: string): void {
  const found = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (found.error !== undefined || found.status !== 0)
    throw new Error(
      `${name} is not installed or not on PATH (${found.error?.message ?? `exit ${found.status}`}): ` +
        'the Redis HA tests start real Redis 7 nodes; install redis-server (e.g. apt-get install redis-server)',
    );
}

async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports handed out in this process, so two nodes of one test never get the same one. */
const taken = new Set<number>();

/** A port of the range free now (and its cluster bus port, +10000, when `bus`). */
async function freePort(bus: boolean): Promise<number> {
  const { first, last } = portRange();
  const size = last - first + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = first + ((start + i) % size);
    if (taken.has(port)) continue;
    if (!(await isFree(port)) || (bus && !(await isFree(port + 10_000)))) continue;
    taken.add(port);
    return port;
  }
  throw new Error(`no free port left in ${first}-${last} (ADOPS_TEST_REDIS_HA_PORTS)`);
}

/** A port of the range nothing listens on now: for "nothing answers there" cases. */
export function unusedPort(): Promise<number> {
  return freePort(false);
}

/** Polls `check` every `everyMs` until it returns true; throws `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what} not reached in ${timeoutMs} ms${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A connection that never retries: for probes and admin commands against one node. */
export function probe(port: number): Redis {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  return redis;
}

/** Runs one command on the node at `port` over a fresh connection. */
export async function command(port: number, name: string, ...args: string[]): Promise<unknown> {
  const redis = probe(port);
  try {
    await redis.connect();
    return await redis.call(name, ...args);
  } finally {
    redis.disconnect();
  }
}

export interface Node {
  readonly port: number;
  /** The running process' id (it changes with restart()). */
  readonly pid: number;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop: a persistent node writes its data down), resolved once it is gone. */
  halt(): Promise<void>;
  /** Starts the node again on its port with its arguments and folder; resolves once it answers PING. */
  restart(): Promise<void>;
  /** Whether the process still runs. */
  alive(): boolean;
}

/**
 * Starts `redis-server` with `args` (a config file may use the placeholder `{port}`) on a free port,
 * in `dir`, and resolves once it answers PING. A port taken meanwhile by someone else makes the
 * server exit: it is started again on another port.
 */
async function startNode(
  dir: string,
  name: string,
  args: (port: number) => string[],
  o: { bus?: boolean } = {},
): Promise<Node> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(o.bus === true);
    const log = join(dir, `${name}-${port}.log`);
    let proc: ChildProcess;
    let exited = false;
    const spawnNode = async () => {
      proc = spawn(
        SERVER,
        [
          ...args(port),
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--logfile',
          log,
          '--daemonize',
          'no',
        ],
        { stdio: 'ignore' },
      );
      exited = false;
      proc.once('exit', () => (exited = true));
      const spawned = await new Promise<Error | undefined>((resolve) => {
        proc.once('error', resolve);
        proc.once('spawn', () => resolve(undefined));
      });
      if (spawned !== undefined) throw new Error(`cannot start ${SERVER}: ${spawned.message}`);
    };
    const answering = () =>
      waitUntil(
        `${name} on port ${port} answering PING`,
        async () => {
          if (exited) throw new Error('exited');
          return (await command(port, 'PING')) === 'PONG';
        },
        10_000,
        50,
      );
    const signal = async (which: NodeJS.Signals) => {
      if (exited) return;
      const gone = once(proc, 'exit');
      proc.kill(which);
      await gone;
    };
    await spawnNode();
    const node: Node = {
      port,
      get pid() {
        return proc.pid ?? -1;
      },
      alive: () => !exited,
      kill: () => signal('SIGKILL'),
      halt: () => signal('SIGTERM'),
      restart: async () => {
        await spawnNode();
        await answering();
      },
    };
    try {
      await answering();
      return node;
    } catch (error) {
      await node.kill();
      const tail = readTail(log);
      if (attempt < 5 && /Address already in use/.test(tail)) continue;
      throw new Error(`${name} on port ${port} did not start: ${(error as Error).message}\n${tail}`, {
        cause: error,
      });
    }
  }
}

function readTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * What every data node runs with: no persistence, BullMQ's required noeviction, and a diskless sync
 * that starts at once (Redis waits 5 s by default for more replicas to share it with).
 */
const DATA_NODE = [
  ...['--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
  ...['--repl-diskless-sync-delay', '0'],
];

export interface RedisClusterFixture {
  readonly nodes: readonly Node[];
  /** REDIS_CLUSTER_NODES for the config. */
  readonly env: string;
  stop(): Promise<void>;
}

/**
 * Starts 3 cluster-enabled masters, joins them with `redis-cli --cluster create`, waits for
 * cluster_state:ok. With `persistent`, each node keeps an append-only file written on every
 * command, so a node halted and restarted comes back with its data.
 */
export async function startRedisCluster(o: { persistent?: boolean } = {}): Promise<RedisClusterFixture> {
  requireBinary(SERVER);
  requireBinary('redis-cli');
  const dir = mkdtempSync(join(tmpdir(), 'adops-redis-cluster-'));
  const nodes: Node[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++)
      nodes.push(
        await startNode(
          dir,
          `cluster-${i}`,
          (port) => [
            ...(o.persistent === true
              ? ['--save', '', '--maxmemory-policy', 'noeviction', '--appendonly', 'yes']
              : DATA_NODE),
            ...(o.persistent === true ? ['--appendfsync', 'always', '--appenddirname', `aof-${port}`] : []),
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '2000',
          ],
          { bus: true },
        ),
      );
    const create = spawn(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    create.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    create.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => create.kill('SIGKILL'), 30_000);
    const [code] = (await once(create, 'exit')) as [number | null];
    clearTimeout(timer);
    if (code !== 0) throw new Error(`redis-cli --cluster create exited ${code}:\n${output}`);
    await waitUntil(
      'cluster_state:ok on every node',
      async () => {
        for (const n of nodes) {
          const info = String(await command(n.port, 'CLUSTER', 'INFO'));
          if (!/cluster_state:ok/.test(info) || !/cluster_known_nodes:3/.test(info)) return false;
        }
        return true;
      },
      20_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, env: nodes.map((n) => `127.0.0.1:${n.port}`).join(','), stop };
}

export interface SentinelFixture {
  readonly master: Node;
  readonly replica: Node;
  readonly sentinels: readonly Node[];
  /** The master name the sentinels monitor. */
  readonly name: string;
  /** REDIS_SENTINELS for the config. */
  readonly env: string;
  /** The port of the master as the first live sentinel reports it. */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts a master, a replica of it and two sentinels (quorum 1, down after 1 s, a 2 s failover
 * timeout), and waits until the replica is in sync and each sentinel knows the replica and the
 * other sentinel: a failover needs both sentinels to agree.
 */
export async function startSentinels(name = 'adops-ha'): Promise<SentinelFixture> {
  requireBinary(SERVER);
  const dir = mkdtempSync(join(tmpdir(), 'adops-redis-sentinel-'));
  const all: Node[] = [];
  const stop = async () => {
    await Promise.all(all.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const master = await startNode(dir, 'master', () => DATA_NODE);
    all.push(master);
    const replica = await startNode(dir, 'replica', () => [
      ...DATA_NODE,
      '--replicaof',
      '127.0.0.1',
      String(master.port),
    ]);
    all.push(replica);
    await waitUntil(
      'the replica in sync with the master',
      async () => /master_link_status:up/.test(String(await command(replica.port, 'INFO', 'replication'))),
      15_000,
    );
    const sentinels: Node[] = [];
    for (let i = 0; i < 2; i++) {
      const node = await startNode(dir, `sentinel-${i}`, (port) => {
        // A sentinel rewrites its config file: each gets its own, writable.
        const file = join(dir, `sentinel-${port}.conf`);
        writeFileSync(
          file,
          [
            `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
            `sentinel down-after-milliseconds ${name} 1000`,
            `sentinel failover-timeout ${name} 2000`,
            `sentinel parallel-syncs ${name} 1`,
            '',
          ].join('\n'),
        );
        return [file, '--sentinel'];
      });
      sentinels.push(node);
      all.push(node);
    }
    await waitUntil(
      'each sentinel knowing the replica and the other sentinel',
      async () => {
        for (const s of sentinels) {
          const replicas = (await command(s.port, 'SENTINEL', 'REPLICAS', name)) as unknown[];
          const others = (await command(s.port, 'SENTINEL', 'SENTINELS', name)) as unknown[];
          if (replicas.length < 1 || others.length < 1) return false;
        }
        return true;
      },
      20_000,
    );
    const masterPort = async () => {
      for (const s of sentinels) {
        if (!s.alive()) continue;
        const addr = (await command(s.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[] | null;
        if (addr !== null) return Number(addr[1]);
      }
      throw new Error('no sentinel answers');
    };
    return {
      master,
      replica,
      sentinels,
      name,
      env: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      masterPort,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
