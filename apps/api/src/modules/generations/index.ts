import type { Config } from '../../config.js';
import { defineModule, type ModuleShared } from '../manifest.js';
import { generationsRouter } from './generations.router.js';
import { GenerationRecorder } from './recorder.js';

declare module '../../trpc/service-deps.js' {
  /** What the generations module adds to every service's deps (built by its create). */
  interface ServiceDeps {
    /** Writes recorded generations in batches (group commit). */
    recorder: GenerationRecorder;
  }
}

export const generationsModule = defineModule({
  name: 'generations',
  routers: { generations: generationsRouter },
  create(_config: Config, { db, now, metrics }: ModuleShared) {
    // Recorded generations are written in batches (group commit).
    const recorder = new GenerationRecorder(db, now, {
      observe: ({ size, seconds, committed }) => {
        metrics.recordingBatchSize.observe(size);
        metrics.recordingCommitDuration.observe({ outcome: committed ? 'committed' : 'failed' }, seconds);
      },
    });
    return { deps: { recorder } };
  },
});
