// Debian's Chromium for browser tests, started the way this closed machine needs: no sandbox (root),
// and no background networking, which would try hosts that cannot be reached.
import { chromium, type Browser } from 'playwright-core'

const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
}
