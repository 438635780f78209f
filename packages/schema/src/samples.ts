// The demo's sample video URL. Dependency-free on purpose: @switchyard/client re-exports it (its
// build copies this module into its package: packages/client/scripts/inline-packages.mjs), so that
// the CLI's demo needs no other package at run time.

/**
 * The demo's sample video, kept with the server (apps/api/assets/sample-video.mp4): a job output
 * with this `upstream_url` is served by the server itself from its own files, never fetched over
 * the network.
 */
export const SAMPLE_VIDEO_URL = 'sample:video.mp4';
