/**
 * Debian's Chromium driven by playwright-core, for the dashboard's browser tests, its
 * screenshots and its page-load measurement. Never downloads a browser: without
 * /usr/bin/chromium the tests say so loudly and skip, or fail under RRL_REQUIRE_BROWSER=1 (CI).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here (null: they can). Throws under RRL_REQUIRE_BROWSER=1. */
export function browserMissing(): string | null {
  const why = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (why) {
    process.stderr.write(`\n${'!'.repeat(78)}\n!! BROWSER TESTS SKIPPED: ${why}\n${'!'.repeat(78)}\n`);
    if (process.env.RRL_REQUIRE_BROWSER === '1') throw new Error(`RRL_REQUIRE_BROWSER=1 but ${why}`);
  }
  return why;
}

/** Starts headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}
