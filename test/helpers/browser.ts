// A headless Chromium for browser tests on any machine: the system's browser when there is one,
// else the one shipped inside the @sparticuz/chromium npm package (no download at run time).
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

/** The browser a test launches: its executable and arguments, and where it came from. */
export interface BrowserChoice {
  readonly executablePath: string;
  readonly args: readonly string[];
  readonly source: 'system' | '@sparticuz/chromium';
}

/** Picks the system Chromium when found, else unpacks the npm-shipped one (once per machine). */
export async function chooseChromium(env: NodeJS.ProcessEnv = process.env): Promise<BrowserChoice> {
  const system = [env.CHROMIUM_PATH, ...SYSTEM_BROWSERS].find(
    (p): p is string => p !== undefined && p !== '' && existsSync(p),
  );
  if (system !== undefined)
    return { executablePath: system, args: ['--headless', ...QUIET_ARGS], source: 'system' };
  const packaged = (await import('@sparticuz/chromium')).default;
  return {
    executablePath: await packaged.executablePath(),
    // Its own flags first: they select the headless shell it is built as.
    args: [...packaged.args, ...QUIET_ARGS],
    source: '@sparticuz/chromium',
  };
}

/** Launches the chosen Chromium through playwright-core, with `extraArgs` after its own. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const choice = await chooseChromium();
  return chromium.launch({ executablePath: choice.executablePath, args: [...choice.args, ...extraArgs] });
}
