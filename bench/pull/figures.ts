// The pull section's figures, per queue backend: pure, so the ratios and rates are unit tested.

/** The queue backends the section runs side by side (ADOPS_QUEUE). */
export const QUEUE_BACKENDS = ['redis', 'postgres'] as const;
export type QueueBackendKind = (typeof QUEUE_BACKENDS)[number];

/** What one timed round of a scenario measured. */
export interface Round {
  readonly wallMs: number;
  readonly workerCpuSeconds: number;
  readonly requests: number;
  readonly failed: number;
  /** Share of all the machine's CPUs busy during the round (0..1), whoever used them. */
  readonly machineBusy: number;
  /** CPU seconds of the Postgres sessions on the scenario's database (warehouse, and queue on Postgres). */
  readonly postgresCpuSeconds: number;
  /** CPU seconds of the Redis server (0 on the Postgres queue; other clients of a shared Redis count too). */
  readonly redisCpuSeconds: number;
}

/** How a scenario's workers ran. */
export interface Shape {
  readonly pulls: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly latencyMs: number;
}

/** The rate-bound backfill: `pulls` pulls at `ratePerSecond` shared API requests a second. */
export interface BoundFigures extends Shape {
  readonly ratePerSecond: number;
  readonly requests: number;
  readonly wallMs: number;
  /** pulls / ratePerSecond: no backfill can be shorter while every pull needs a request. */
  readonly boundMs: number;
  readonly failed: number;
  /** Share of the machine's CPUs busy meanwhile: near 1, other work starved the run. */
  readonly machineBusy: number;
}

/** The capacity run: no rate limit and no latency, so the queue, workers and loads are the limit. */
export interface CapacityFigures extends Shape {
  readonly wallMs: number;
  readonly pullsPerSecond: number;
  readonly requests: number;
  readonly failed: number;
  readonly machineBusy: number;
  /** Worker CPU (all workers) per pull: informational, the CPU target is the 1-worker Redis measure. */
  readonly workerCpuMsPerPull: number;
  /** CPU per pull of the database's Postgres sessions: the loads, and on Postgres the queue too. */
  readonly postgresCpuMsPerPull: number;
  /** CPU per pull of the Redis server (0 on the Postgres queue). */
  readonly redisCpuMsPerPull: number;
  /**
   * Workers, Postgres and Redis together per pull: what a pull costs the machine, however busy
   * others keep it (the bench's own process, the emulator and the wait, is left out).
   */
  readonly totalCpuMsPerPull: number;
}

/** One backend's figures. */
export interface BackendPullFigures {
  /** Wall time of the bound scenario over its bound (issue 20 and 26: at most 1.1x). */
  readonly backfillOverRateBound: number;
  readonly bound: BoundFigures;
  readonly capacity: CapacityFigures;
}

/** The bound scenario's round, set against the bound its rate sets. */
export function boundFigures(shape: Shape, ratePerSecond: number, round: Round): BoundFigures {
  return {
    ...shape,
    ratePerSecond,
    requests: round.requests,
    wallMs: round.wallMs,
    boundMs: (shape.pulls / ratePerSecond) * 1000,
    failed: round.failed,
    machineBusy: round.machineBusy,
  };
}

/** The capacity scenario's round as pulls a second and CPU per pull. */
export function capacityFigures(shape: Shape, round: Round): CapacityFigures {
  const perPull = (seconds: number) => (seconds * 1000) / shape.pulls;
  return {
    ...shape,
    wallMs: round.wallMs,
    pullsPerSecond: round.wallMs > 0 ? shape.pulls / (round.wallMs / 1000) : Infinity,
    requests: round.requests,
    failed: round.failed,
    machineBusy: round.machineBusy,
    workerCpuMsPerPull: perPull(round.workerCpuSeconds),
    postgresCpuMsPerPull: perPull(round.postgresCpuSeconds),
    redisCpuMsPerPull: perPull(round.redisCpuSeconds),
    totalCpuMsPerPull: perPull(round.workerCpuSeconds + round.postgresCpuSeconds + round.redisCpuSeconds),
  };
}

/** One backend's bound and capacity figures together. */
export function backendFigures(bound: BoundFigures, capacity: CapacityFigures): BackendPullFigures {
  return { backfillOverRateBound: bound.wallMs / bound.boundMs, bound, capacity };
}
