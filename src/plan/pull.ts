// The unit every plan is made of: one report definition x one period.
import type { Period } from '../dates/periods.js';

/** One pull a plan asks for. */
export interface PlannedPull {
  /** The ad server account; DEFAULT_ACCOUNT when absent. */
  readonly account?: string;
  readonly report: string;
  readonly period: Period;
  /** The table version the pull is planned for, when a report is evolving (see PullJobData). */
  readonly version?: number;
}

/** A short label for logs and messages: `daily_campaign 2026-01-05` or `... 2026-01-05..2026-01-11`. */
export function pullLabel(pull: PlannedPull): string {
  const { start, end } = pull.period;
  const who = pull.account === undefined || pull.account === 'default' ? '' : `${pull.account}/`;
  return `${who}${pull.report} ${start === end ? start : `${start}..${end}`}`;
}

/** The accounts a plan is made for: names and the reports each runs (undefined: all). */
export type PlanAccount = { readonly name: string; readonly reports: readonly string[] | undefined };

/** The one account of a deployment without ADOPS_ACCOUNTS_FILE. */
export const ONLY_DEFAULT: readonly PlanAccount[] = [{ name: 'default', reports: undefined }];

/**
 * One plan per account, merged so the accounts take turns (a,b,c,a,b,c...): a queue worked from
 * its head then serves every account from the start instead of one account after the other.
 * `plan` gets the reports the account runs.
 */
export function planForAccounts<R extends { readonly name: string }>(
  accounts: readonly PlanAccount[],
  reports: readonly R[],
  plan: (reports: readonly R[], account: string) => readonly PlannedPull[],
): PlannedPull[] {
  return [...interleaveAccounts(accounts, reports, plan)];
}

/**
 * The pulls of every account, each account's own in the order `plan` gives them, taken in turn
 * (one of the first account, one of the second, ...), so no account waits behind another's whole
 * backfill. Lazy: a plan that is a generator is read only as far as the pulls are taken.
 */
export function* interleaveAccounts<R extends { readonly name: string }>(
  accounts: readonly PlanAccount[],
  reports: readonly R[],
  plan: (reports: readonly R[], account: string) => Iterable<PlannedPull>,
): Generator<PlannedPull> {
  let live = accounts.map((a) => ({
    name: a.name,
    pulls: plan(
      reports.filter((r) => a.reports === undefined || a.reports.includes(r.name)),
      a.name,
    )[Symbol.iterator](),
  }));
  while (live.length > 0) {
    const still: typeof live = [];
    for (const a of live) {
      const next = a.pulls.next();
      if (next.done === true) continue;
      yield { ...next.value, account: a.name };
      still.push(a);
    }
    live = still;
  }
}
