// Imported first by main.ts, so it runs before the server allocates anything: the V8 flags that keep
// the server's resident memory down (measured: docs/decisions/0002-v8-heap-flags.md).
//
// Old generation growth: after a full GC, V8 lets the old generation grow to several times its live
// size before the next one (its factor is the largest while it has no GC speed measured yet, i.e.
// for the limit computed during start-up), so under load the server's RSS was mostly garbage. A
// small factor keeps the peak near the live size at the cost of more frequent, mostly concurrent,
// full GCs (no throughput loss measured).
//
// WebAssembly (Prisma's query compiler): baseline (Liftoff) code only, no tier-up to TurboFan,
// whose compile memory stays resident in the worker threads' malloc arenas for good.
// The query compiler only runs on query-plan cache misses.
//
// Not here: --no-memory-reducer. V8 creates the memory reducer with the heap, so setting the flag
// now changes nothing (measured); node must be given it (node-flags.ts).
import v8 from 'node:v8';

v8.setFlagsFromString('--heap-growing-percent=50');
v8.setFlagsFromString('--no-wasm-dynamic-tiering');
v8.setFlagsFromString('--no-wasm-tier-up');
