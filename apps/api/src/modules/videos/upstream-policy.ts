// Moved to the shared upstream module (apps/api/src/upstream/, issue 40): kept as a re-export so
// that code written against this path (video downloads' callers, JWKS fetches) keeps compiling.
// New code imports from '../../upstream/index.js'.
export * from '../../upstream/policy.js';
