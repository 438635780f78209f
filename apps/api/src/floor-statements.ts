// The statement each of these operations makes per answer, with its values, for the bench's
// database floor: an express app that makes the same round trip through node-postgres before
// answering fixed bytes, i.e. what any server of this schema pays at least for the answer on the
// same machine. The services build their statements' values through these same functions.
export { activityDays, activityQuery } from './modules/account/activity.service.js';
export { generationQuery } from './modules/generations/generations.service.js';
export { guardrailsPageQuery } from './modules/guardrails/guardrails.service.js';
export { createKeyQuery, keysPageQuery } from './modules/keys/keys.service.js';
export { MemberOrderCache } from './modules/organization/member-order.js';
export { membersByIdQuery } from './modules/organization/members.service.js';
