// GET /samples/video.mp4: a stand-in for a video provider's download URL, so that demo data (see
// `switchyard demo`) can record a video job whose output downloads on a machine with no internet.
// The clip is a real MP4: 1 second of ffmpeg's test pattern at 64x64, 2 KB
// (`ffmpeg -f lavfi -i testsrc=size=64x64:rate=8:duration=1 -c:v libx264 -pix_fmt yuv420p
// -profile:v baseline -crf 35 -movflags +faststart`). Public and outside /api/v1: it is the
// "provider" side, which GET /api/v1/videos/{jobId}/content fetches without credentials.
import { fileURLToPath } from 'node:url';
import { Router } from 'express';

const SAMPLE_VIDEO_PATH = '/samples/video.mp4';

/** The clip, from src/http or dist/http alike. */
const SAMPLE_VIDEO_FILE = fileURLToPath(new URL('../../assets/sample-video.mp4', import.meta.url));

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
