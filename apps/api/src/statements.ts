// The statements the services make, as the package exports them (`@switchyard/api/statements`):
// the bench's database floors make the very statement a service makes per answer, built by the
// same functions with the same values, so that the floor and the server differ only in the server.
export { activityDays, activityQuery } from './modules/account/activity-queries.js';
export { rollupCtes } from './modules/analytics/rollup.js';
export { alertsQuery } from './modules/events/limit-alerts.js';
export { generationQuery } from './modules/generations/generations-queries.js';
export { RECORD_BATCH } from './modules/generations/recorder.js';
export { GuardrailCache } from './modules/guardrails/guardrail-cache.js';
export { guardrailsPageQuery } from './modules/guardrails/guardrails-queries.js';
export { createKeyQuery, keysPageQuery } from './modules/keys/keys-queries.js';
export { MemberOrderCache } from './modules/members/member-order.js';
export { membersByIdQuery } from './modules/members/members-queries.js';
export { limitChecks } from '@switchyard/rules';
export { ReservationQueue } from './modules/routing/reservation-queue.js';
export { type Reservation, reserveQuery } from './modules/routing/routing-queries.js';
export { WorkspaceRoutingCache } from './modules/routing/routing.service.js';
