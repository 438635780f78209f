// Replicas that agree at once: every process LISTENs on the channel that the database's triggers
// announce cache-relevant writes on (migrations "cache_notifications" and
// "guardrail_cache_notifications": "key:<hash>", "organization:<id>", "members:<organization id>",
// "guardrails:<organization id>", "routing:<organization id>", "catalog"), and drops the affected entries when a notification
// arrives. While the listening connection is down, announcements are lost:
// CACHE_TTL_MS still bounds what a process keeps, and once it listens again it drops everything it
// holds. Each announcement then goes on to the deciders' change stream (modules/decider), after the
// caches have dropped what it names, so that a decider that reads again reads past it.
import { listen, type Listener } from '@switchyard/db';
import type { Logger } from './lib/logger.js';
import type { KeyCache } from './access/callers.js';
import type { ChangeFeed } from './modules/decider/change-feed.js';
import type { GuardrailCache } from './modules/guardrails/guardrail-cache.js';
import type { CatalogCache } from './modules/models/catalog-cache.js';
import type { MemberOrderCache } from './modules/members/member-order.js';
import type { WorkspaceRoutingCache } from './modules/routing/routing.service.js';
import type { OrganizationLimitSettings } from './limits/limit-settings.js';
import type { ApiRateLimits } from './limits/api-rate-limits.js';

export const CACHE_CHANNEL = 'switchyard_cache';

export interface Caches {
  keys: KeyCache;
  catalog: CatalogCache;
  memberOrder: MemberOrderCache;
  guardrails: GuardrailCache;
  workspaceRouting: WorkspaceRoutingCache;
  limitSettings: OrganizationLimitSettings;
  apiRateLimits: ApiRateLimits;
  deciderChanges: ChangeFeed;
}

/** Drops what one announcement names. */
export function applyCacheEvent(caches: Caches, payload: string): void {
  if (payload === 'catalog') caches.catalog.invalidate();
  else if (payload.startsWith('key:')) caches.keys.forget(payload.slice('key:'.length));
  else if (payload.startsWith('organization:')) caches.keys.forgetOrganization(payload.slice('organization:'.length));
  else if (payload.startsWith('members:')) caches.memberOrder.forget(payload.slice('members:'.length));
  else if (payload.startsWith('guardrails:')) caches.guardrails.forgetOrganization(payload.slice('guardrails:'.length));
  else if (payload.startsWith('routing:')) {
    const organizationId = payload.slice('routing:'.length);
    caches.workspaceRouting.forgetOrganization(organizationId);
    caches.limitSettings.forgetOrganization(organizationId);
    void caches.apiRateLimits.forgetOrganization(organizationId);
  }
  caches.deciderChanges.publish(payload);
}

/** Drops everything (announcements may have been missed). */
export function clearCaches(caches: Caches): void {
  caches.keys.clear();
  caches.catalog.invalidate();
  caches.memberOrder.clear();
  caches.guardrails.clear();
  caches.workspaceRouting.clear();
  caches.limitSettings.clear();
  void caches.apiRateLimits.clear();
  caches.deciderChanges.reloadAll();
}

/**
 * Listens until closed. `connectionLost` (the database's health) is told each failure of the
 * connection and answers whether it was the database going away: such failures are not logged
 * here (the database's health logs the loss once), others are.
 */
export function listenForCacheEvents(
  databaseUrl: string,
  caches: Caches,
  logger: Logger,
  connectionLost: (error: Error) => boolean = () => false,
): Promise<Listener> {
  const log = logger.child({ component: 'cache-events' });
  return listen(databaseUrl, CACHE_CHANNEL, {
    message: (payload) => applyCacheEvent(caches, payload),
    connected(reconnected) {
      caches.deciderChanges.listening(true);
      if (!reconnected) return;
      clearCaches(caches);
      log.info('listening again for cache announcements; dropped every cached entry');
    },
    error(error) {
      caches.deciderChanges.listening(false);
      if (!connectionLost(error)) log.warn({ err: error }, 'cache announcements interrupted; reconnecting (CACHE_TTL_MS bounds what is kept meanwhile)');
    },
  });
}
