// The one way a test waits for something it cannot subscribe to (a row, a job count, a stat): look
// again every `everyMs` until it holds, and name what never came when the time is up.

/** Resolves once `check` holds, looking every `everyMs`; throws naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
