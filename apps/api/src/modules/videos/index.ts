import { API_PREFIX } from '@switchyard/schema';
import { VIDEO_CONTENT_ROUTES } from './videos.routes.js';
import { videosRouter } from './videos.router.js';
import { defineModule } from '../manifest.js';

export const videosModule = defineModule({
  name: 'videos',
  routers: { videos: videosRouter },
  byteRoutes: [{ prefix: API_PREFIX, routes: VIDEO_CONTENT_ROUTES }],
});
