// The one policy for every request the server makes to a URL it was given: video
// upstreams (GET /videos/{jobId}/content), webhook deliveries, JWKS fetches. UPSTREAM_ALLOWED_HOSTS
// (config.ts: media.upstreamAllowedHosts) is its one setting. Names kept stable for callers:
//
// - upstreamPolicyOf(media)              the policy of this server: allowed hosts + its own addresses
// - upstreamFetch(policy, url, init)     one guarded request with a bounded answer (webhooks, JWKS);
//                                        no redirects followed, a deadline, RefusedUpstream before
//                                        any connection when the address is refused
// - guardedAddresses(url, policy)        the checked addresses of one hop, and pinnedLookup(addresses)
//                                        for a socket that connects only to them (streaming callers,
//                                        e.g. videos/upstream.ts)
// - storedUrlProblem(url, allowedHosts)  why a URL may not be stored for later fetching (https only;
//                                        http only to an allowed loopback host), or null
// - refusalOf, serverAddresses, parseAllowedHosts, isAllowedHost, canonicalAddress: the address rules
import type { AllowedHost } from './policy.js';
import { serverAddresses } from './policy.js';
import type { UpstreamPolicy } from './connect.js';

export * from './policy.js';
export * from './connect.js';
export * from './fetch.js';

/** The policy of a server configured with these allowed hosts, listening on listenHost. */
export function upstreamPolicyOf(config: { upstreamAllowedHosts: readonly AllowedHost[]; listenHost: string }): UpstreamPolicy {
  return { allowedHosts: config.upstreamAllowedHosts, ownAddresses: serverAddresses(config.listenHost) };
}
