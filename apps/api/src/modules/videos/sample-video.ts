// The demo's sample video, so that demo data (see `switchyard demo`) can record a video job whose
// output downloads on a machine with no internet. The clip is a real MP4: 1 second of ffmpeg's
// test pattern at 64x64, 2 KB (`ffmpeg -f lavfi -i testsrc=size=64x64:rate=8:duration=1 -c:v
// libx264 -pix_fmt yuv420p -profile:v baseline -crf 35 -movflags +faststart`).
// - A job output whose upstream_url is `sample:video.mp4` is served from this file by
//   GET /api/v1/videos/{jobId}/content itself (videos.routes.ts): no network fetch, so the
//   demo needs no loopback exception in the upstream rules.
// - GET /samples/video.mp4 also serves it publicly (no key, outside /api/v1), e.g. for a player.
import { fileURLToPath } from 'node:url';
import { Router } from 'express';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema';

const SAMPLE_VIDEO_PATH = '/samples/video.mp4';

/** The clip, from src/modules/videos or dist/modules/videos alike. */
const SAMPLE_VIDEO_FILE = fileURLToPath(new URL('../../../assets/sample-video.mp4', import.meta.url));

/** The file a job output's internal `sample:` reference names, or null for any other URL. */
export function sampleFileOf(upstreamUrl: string): string | null {
  return upstreamUrl === SAMPLE_VIDEO_URL ? SAMPLE_VIDEO_FILE : null;
}

export function sampleVideoRoutes(): Router {
  const routes = Router();
  routes.get(SAMPLE_VIDEO_PATH, (_req, res, next) => {
    // sendFile answers Range requests (206) as a provider would, with Content-Type video/mp4.
    res.sendFile(SAMPLE_VIDEO_FILE, { headers: { 'Cache-Control': 'public, max-age=86400' } }, (error) => {
      if (error && !res.headersSent) next(error);
    });
  });
  return routes;
}
