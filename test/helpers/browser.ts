// A headless Chromium for browser tests on any machine: the system's browser when there is one,
// else the one shipped inside the @sparticuz/chromium npm package (no download at run time);
// ADOPS_TEST_BROWSER=system or packaged picks one, so the suite can be proven with each.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where a system Chromium usually lives; CHROMIUM_PATH (the test run's env) comes first. */
const SYSTEM_BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

// This machine has no internet: keep Chromium from reaching out, so nothing waits on a timeout.
const QUIET_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Turns off Chromium's Local Network Access checks (on from Chromium 142): with them, a page from a public
 * address cannot fetch from loopback at all, so a test of what a server itself refuses to such a page
 * would only see the browser's `TypeError: Failed to fetch`. */
export const LOCAL_NETWORK_ACCESS_OFF = '--disable-features=LocalNetworkAccessChecks';

/** One `--disable-features` and one `--enable-features` holding every value `args` gives: Chromium reads only
 * the last of each, so a second one (the packaged browser brings its own) would silently drop the first. */
export function mergeFeatureFlags(args: readonly string[]): string[] {
  const merged: string[] = [];
  const features = new Map<string, string[]>();
  for (const arg of args) {
    const m = /^(--(?:disable|enable)-features)=(.*)$/.exec(arg);
    if (m === null) {
      merged.push(arg);
      continue;
    }
    const [, flag = '', list = ''] = m;
    if (!features.has(flag)) merged.push(flag); // its place: where it first appears
    features.set(flag, [...(features.get(flag) ?? []), ...list.split(',').filter((f) => f !== '')]);
  }
  return merged.map((arg) => {
    const list = features.get(arg);
    return list === undefined ? arg : `${arg}=${[...new Set(list)].join(',')}`;
  });
}

/** The browser a test launches: its executable and arguments, and where it came from. */
export interface BrowserChoice {
  readonly executablePath: string;
  readonly args: readonly string[];
  readonly source: 'system' | '@sparticuz/chromium';
}

/** ADOPS_TEST_BROWSER's values: `system` (a system Chromium, or fail), `packaged` (the npm-shipped one). */
export const TEST_BROWSERS = ['system', 'packaged'] as const;

/** The browser ADOPS_TEST_BROWSER asks for: unset picks the system Chromium when found, else the npm-shipped one.
 * Both must pass the suite, so run the browser tests once with each. */
export async function chooseChromium(env: NodeJS.ProcessEnv = process.env): Promise<BrowserChoice> {
  const wanted = env.ADOPS_TEST_BROWSER ?? '';
  if (wanted !== '' && !TEST_BROWSERS.some((b) => b === wanted))
    throw new Error(
      `ADOPS_TEST_BROWSER=${JSON.stringify(wanted)} is invalid: expected one of: ${TEST_BROWSERS.join(', ')}`,
    );
  const candidates = [env.CHROMIUM_PATH, ...SYSTEM_BROWSERS];
  const system = candidates.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
  if (wanted === 'system' && system === undefined)
    throw new Error(
      `ADOPS_TEST_BROWSER=system: no Chromium at CHROMIUM_PATH or ${SYSTEM_BROWSERS.join(', ')}`,
    );
  if (system !== undefined && wanted !== 'packaged')
    return { executablePath: system, args: ['--headless', ...QUIET_ARGS], source: 'system' };
  const packaged = (await import('@sparticuz/chromium')).default;
  return {
    executablePath: await packaged.executablePath(),
    // Its own flags first: they select the headless shell it is built as.
    args: [...packaged.args, ...QUIET_ARGS],
    source: '@sparticuz/chromium',
  };
}

/** A launched browser and which one it is, for a test to say which browser ran. */
export interface LaunchedChromium {
  readonly browser: Browser;
  readonly choice: BrowserChoice;
  /** E.g. `system /usr/bin/chromium 156.0.8078.108`. */
  readonly description: string;
}

/** Launches the chosen Chromium through playwright-core, with `extraArgs` after its own. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<LaunchedChromium> {
  const choice = await chooseChromium();
  const browser = await chromium.launch({
    executablePath: choice.executablePath,
    args: mergeFeatureFlags([...choice.args, ...extraArgs]),
  });
  return { browser, choice, description: `${choice.source} ${choice.executablePath} ${browser.version()}` };
}
