// @switchyard/rules: the routing decision's rules (docs/routing.md), pure: no database, no I/O,
// no clock of their own, no logger, no dependencies. The server's routing.authorize and GET /model
// call them, and @switchyard/client carries them (its build copies this package's build in) for a
// decider in the routing service's own process.
export * from './catalog.js';
export * from './decide.js';
export * from './limits.js';
export * from './policy.js';
export * from './refusals.js';
export * from './windows.js';
