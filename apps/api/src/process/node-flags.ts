// The options `node` itself must be given to run the server: V8 reads them when it creates the
// heap, before any of the server's code runs, so heap.ts cannot set them. `pnpm start` passes them
// (the start scripts of package.json and apps/api/package.json; process.test.ts checks both), and
// so do the benchmark and the tests' server processes.
//
// --no-memory-reducer: V8's memory reducer shrinks the heap, young generation included, once the
// process has been idle for a few seconds; under load, with short-lived garbage, the young
// generation then grows back over tens of seconds, and until it has, scavenges come several times
// as often. Every burst after a quiet spell paid that in server CPU per answer. What the flag costs
// is the memory an idle server would have given back: a busy spell's heap is kept until the next
// one. The figures: docs/decisions/0003-no-memory-reducer.md.
export const NODE_FLAGS: readonly string[] = ['--no-memory-reducer'];

/**
 * The environment `pnpm start` gives node, for the same reason: the C library reads it when the
 * process starts. MALLOC_ARENA_MAX=2: glibc's malloc gives each thread that allocates (V8's
 * compiler and GC threads, libuv's pool) an arena of its own, up to 8 per core, and memory freed in
 * an arena stays resident while any of it is in use. Under the batch recorder's load the memory
 * outside V8's heap grew with the arenas; with two, the peak is lower at the same rate. Other C
 * libraries ignore it. The figures: docs/decisions/0004-malloc-arena-max.md.
 */
export const START_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
