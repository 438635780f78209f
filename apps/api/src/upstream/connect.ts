// The address check every outbound connection goes through: a URL's host is resolved once, each
// address is judged by the policy (policy.ts) unless the operator allowed the host
// (UPSTREAM_ALLOWED_HOSTS), and the socket then connects to exactly the addresses that were checked
// (pinnedLookup), so a second DNS answer cannot move it elsewhere (DNS rebinding).
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { Upstream } from '../lib/errors.js';
import { isAllowedHost, refusalOf, type AllowedHost } from './policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** What an outbound connection is judged by. */
export interface UpstreamPolicy {
  /** Hosts whose addresses are not checked (UPSTREAM_ALLOWED_HOSTS). */
  allowedHosts: readonly AllowedHost[];
  /** This server's own addresses, canonical (refused like loopback): serverAddresses(listenHost). */
  ownAddresses: ReadonlySet<string>;
  /** Name resolution; every address of the answer. Default: the system resolver (dns.lookup). */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** An upstream the server will not connect to: logged with its reason, answered as 502 where it surfaces. */
export class RefusedUpstream extends Upstream {}

const systemResolve = (hostname: string) => dns.promises.lookup(hostname, { all: true });

/** The addresses one hop may connect to, all of them checked; throws RefusedUpstream (or Upstream: no address) otherwise. */
export async function guardedAddresses(url: URL, policy: UpstreamPolicy): Promise<ResolvedAddress[]> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedUpstream(`upstream scheme ${url.protocol}`);
  if (url.username || url.password) throw new RefusedUpstream(`credentials in the upstream URL of ${url.host}`);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const family = net.isIP(hostname);
  let addresses: ResolvedAddress[];
  if (family) {
    addresses = [{ address: hostname, family }];
  } else {
    addresses = await (policy.resolve ?? systemResolve)(hostname).catch((error: NodeJS.ErrnoException) => {
      throw new Upstream(`cannot resolve ${hostname}: ${error.code ?? error.message}`);
    });
    if (addresses.length === 0) throw new Upstream(`${hostname} has no address`);
  }
  if (isAllowedHost(url, policy.allowedHosts)) return addresses;
  for (const { address } of addresses) {
    const reason = refusalOf(address, policy.ownAddresses);
    if (reason) throw new RefusedUpstream(`upstream ${url.host} is ${address} (${reason}); UPSTREAM_ALLOWED_HOSTS can allow it`);
  }
  return addresses;
}

/** A socket lookup that answers with the addresses already checked, never asking DNS again. */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    // Asynchronous, like dns.lookup itself.
    process.nextTick(() => {
      if (options.all) (callback as (err: null, list: ResolvedAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
