// What the worker tells whoever watches it (the Prometheus metrics of src/observe, wired by the
// composition root): the worker reports events and never knows who listens.

/** How a pull ended, as counted: its outcome and, when it loaded, its figures. */
export type PullEvent =
  | {
      readonly outcome: 'loaded' | 'superseded';
      readonly rows: number;
      readonly fetchMs: number;
      readonly loadMs: number;
      readonly totalMs: number;
    }
  | { readonly outcome: 'retry' | 'failed' | 'rate_limited' };

/** One HTTP attempt to the API (its status, undefined when no response came). */
export interface AttemptEvent {
  readonly status: number | undefined;
  readonly attempt: number;
  readonly path: string;
}

/** The listener of a worker's events. */
export interface WorkerObserver {
  pull(report: string, event: PullEvent): void;
  attempt(event: AttemptEvent): void;
}

/** An observer that listens to nothing (tests, the demo). */
export const UNOBSERVED: WorkerObserver = { pull: () => undefined, attempt: () => undefined };
