import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium; `.ci/run` installs it. */
const CHROMIUM = "/usr/bin/chromium";

/**
 * A headless Chromium for tests that drive the hub's pages as a person would.
 * No sandbox because tests run as root; no background networking, since the
 * machine reaches nothing beyond loopback. `args` adds switches, such as
 * `--host-resolver-rules` to reach the hub under another name.
 */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...args,
    ],
  });
}
