import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import net, { BlockList } from "node:net";

/**
 * Addresses a webhook may not reach unless the operator allows it: loopback,
 * private, link-local, shared, reserved, documentation and multicast ranges
 * (IANA special-purpose registries), so a route cannot be aimed at the hub's
 * own network.
 */
const NON_PUBLIC = new BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, "ipv4");
}
for (const [prefix, bits] of [
  ["::", 128],
  ["::1", 128],
  ["100::", 64],
  // Teredo and 6to4 tunnel IPv4 inside IPv6 (RFC 4380, RFC 3056); both are long deprecated, so refuse them whole.
  ["2001::", 32],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, "ipv6");
}

/** IPv4 addresses carried inside IPv6 ones (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`) are judged as IPv4. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (!match) return null;
  if (match[1]) return match[1];
  const high = parseInt(match[2] ?? "0", 16);
  const low = parseInt(match[3] ?? "0", 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Whether an IP address is outside the public internet. */
export function isNonPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    return v4 ? NON_PUBLIC.check(v4, "ipv4") : NON_PUBLIC.check(address, "ipv6");
  }
  return true;
}

/** A target the guard refuses; its message says what the owner or operator can do. */
export class TargetRefused extends Error {
  readonly code = "ETARGETREFUSED";
}

/** The refusal of the guard behind a failed request, however deep the HTTP client wrapped it. */
export function refusalIn(err: unknown): TargetRefused | null {
  for (let e = err as { cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e instanceof TargetRefused) return e;
  }
  return null;
}

/** Whether a request failed by running out of time (an abort signal or one of undici's timeouts). */
export function isTimeout(err: unknown): boolean {
  const name = (err as Error).name;
  const code = (err as { code?: string }).code;
  return (
    name === "TimeoutError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  );
}

const ALLOW_HINT = "the hub's operator can allow such targets with HUB_WEBHOOKS_ALLOW_PRIVATE=1";

/**
 * The host of a URL when it names this machine or a non-public network by
 * itself (localhost, a non-public IP literal), else null. Names that resolve
 * to such addresses are caught later, by `guardedLookup`.
 */
export function privateHostOf(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const local =
    host === "localhost" || host.endsWith(".localhost") || (net.isIP(host) !== 0 && isNonPublicAddress(host));
  return local ? host : null;
}

/**
 * Checks a target URL's form: http or https, no credentials, and, when its
 * host is an IP literal, a public one. Names are checked again at every
 * delivery, after DNS resolution (`guardedLookup`).
 */
export function checkTargetUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused(`"${raw}" is not an absolute URL; send one like https://example.com/hooks.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TargetRefused(`Webhook targets must use http or https, not ${url.protocol.slice(0, -1)}.`);
  if (url.username || url.password)
    throw new TargetRefused(
      "Webhook URLs may not carry credentials; verify deliveries with the signing secret instead.",
    );
  const host = privateHostOf(url);
  if (host && !allowPrivate) throw new TargetRefused(`${host} is not a public address; ${ALLOW_HINT}.`);
  return url;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for sockets that resolves the name and refuses it when any of
 * its addresses is not public. The socket connects to the address checked
 * here, so a name cannot resolve to a public address for the check and a
 * private one for the connection. `allowHint` says how the operator allows
 * such addresses for the feature at hand.
 */
export function guardedLookup(allowPrivate: boolean, allowHint = ALLOW_HINT) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : (options.family ?? 0);
    dnsLookup(hostname, { all: true, family }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = allowPrivate ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
      if (refused) {
        return callback(
          new TargetRefused(
            `${hostname} resolves to ${refused.address}, not a public address; ${allowHint}.`,
          ),
          [],
        );
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new TargetRefused(`${hostname} has no address.`), []);
      callback(null, first.address, first.family);
    });
  };
}
