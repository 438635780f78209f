// Which addresses an outbound fetch (video upstreams, webhook deliveries, JWKS) may connect to. Deny
// by default: an address is admitted only when it is public unicast, so that a stored URL cannot make the server
// reach loopback, its private networks, link-local metadata services, CGNAT, or itself. The ranges
// come from ipaddr.js; what is written here is only the policy over them and the IPv6 forms that
// embed an IPv4 address (mapped, NAT64), which are judged by the IPv4 address they carry.
import os from 'node:os';
import ipaddr from 'ipaddr.js';

/** An UPSTREAM_ALLOWED_HOSTS entry: a host as URLs spell it (normalised), and a port or any. */
export interface AllowedHost {
  /** Lowercase name, dotted IPv4, or bracketed IPv6, as `URL.hostname` gives it. */
  host: string;
  /** null: every port. */
  port: number | null;
}

const ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/;

/**
 * Parses UPSTREAM_ALLOWED_HOSTS: comma-separated `host[:port]` (IPv6 in brackets). Hosts are
 * normalised the way URLs are (case, IPv4 spellings such as 127.1), so an entry matches the URLs
 * that name the same host. Throws on an entry that is not a bare host[:port].
 */
export function parseAllowedHosts(value: string): AllowedHost[] {
  const entries: AllowedHost[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = ENTRY.exec(entry);
    const port = match?.[2] === undefined ? null : Number(match[2]);
    let host: string | undefined;
    try {
      host = match ? new URL(`http://${match[1]}`).hostname : undefined;
    } catch {
      host = undefined;
    }
    if (!host || (port !== null && (port < 1 || port > 65535))) {
      throw new Error(`"${entry}" is not host[:port] (IPv6 in brackets, port 1-65535)`);
    }
    entries.push({ host: withoutTrailingDot(host), port });
  }
  return entries;
}

const withoutTrailingDot = (host: string) => (host.endsWith('.') ? host.slice(0, -1) : host);

/** Whether the operator allowed this URL's host (and port) in UPSTREAM_ALLOWED_HOSTS. */
export function isAllowedHost(url: URL, allowed: readonly AllowedHost[]): boolean {
  const host = withoutTrailingDot(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return allowed.some((entry) => entry.host === host && (entry.port === null || entry.port === port));
}

/** Global unicast IPv6 (2000::/3); ipaddr.js calls everything it has no range for "unicast". */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** The well-known NAT64 prefix (RFC 6052): the last 32 bits are the IPv4 address reached. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** The IPv4 address an IPv6 address stands for (mapped or well-known NAT64), or the address itself. */
function effective(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (ip.kind() === 'ipv4') return ip;
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.match(NAT64_WELL_KNOWN)) return ipaddr.fromByteArray(v6.toByteArray().slice(12)) as ipaddr.IPv4;
  return v6;
}

/** One spelling per address (IPv4 dotted, IPv6 compact; mapped and NAT64 forms as their IPv4). */
export function canonicalAddress(address: string): string {
  return effective(ipaddr.parse(stripZone(address))).toString();
}

const stripZone = (address: string) => address.replace(/%.*$/, '');

/**
 * Why an upstream fetch may not connect to `address`, or null when it may. Refused: anything but
 * public unicast (IPv4: loopback, RFC 1918, link-local, CGNAT, unspecified, multicast, broadcast,
 * reserved and documentation ranges; IPv6: loopback, unspecified, ULA, link-local, site-local,
 * multicast, IPv4-compatible, 6to4, Teredo, documentation, and anything outside 2000::/3; mapped and
 * NAT64 forms by the IPv4 address they carry), and the server's own addresses (`own`, canonical).
 */
export function refusalOf(address: string, own: ReadonlySet<string>): string | null {
  if (!ipaddr.isValid(stripZone(address))) return 'not an IP address';
  const ip = effective(ipaddr.parse(stripZone(address)));
  if (own.has(ip.toString())) return "this server's own address";
  const range = ip.range();
  if (ip.kind() === 'ipv6' && !(ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) {
    return range === 'unicast' ? 'not global unicast' : range;
  }
  return range === 'unicast' ? null : range;
}

/**
 * The addresses this server answers on, canonical: the listening address, or every interface's
 * when it listens on all of them (0.0.0.0 or ::). Read at each call, since interfaces change.
 */
export function serverAddresses(listenHost: string): Set<string> {
  const host = listenHost.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(host)) return new Set();
  if (ipaddr.parse(host).range() !== 'unspecified') return new Set([canonicalAddress(host)]);
  const all = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
  return new Set(all.map((i) => canonicalAddress(i.address)));
}

/** Loopback hosts as URLs spell them (after normalisation by URL). */
function isLoopbackHost(hostname: string): boolean {
  const host = withoutTrailingDot(hostname.toLowerCase()).replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return ipaddr.isValid(host) && effective(ipaddr.parse(host)).range() === 'loopback';
}

/**
 * Why a URL that the server will later fetch on a tenant's behalf (a webhook, an OTLP endpoint, a
 * service's base URL) may not be stored, or null when it may. The rule: an absolute `https` URL
 * without credentials; `http` only to a loopback host that the operator allowed in
 * UPSTREAM_ALLOWED_HOSTS (development and tests; a receiver on this machine). Where the name
 * resolves to is checked again at each fetch (guardedAddresses), since DNS answers change.
 */
export function storedUrlProblem(value: string, allowed: readonly AllowedHost[]): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.username || url.password) return 'credentials in the URL are not accepted (use headers)';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname) && isAllowedHost(url, allowed)) return null;
  if (url.protocol === 'http:') return 'http is accepted only to a loopback host allowed in UPSTREAM_ALLOWED_HOSTS; use https';
  return `scheme ${url.protocol} is not accepted; use https`;
}
