import path from 'node:path';
import type { MediaConfig } from '../config.js';
import { LocalStorage } from './local-storage.js';
import type { BlobStorage } from './storage.js';

export interface MediaDeps extends MediaConfig {
  storage: BlobStorage;
}

/** The default media wiring: bytes on the local filesystem under DATA_DIR/blobs. */
export function createMedia(dataDir: string, config: MediaConfig): MediaDeps {
  return { ...config, storage: new LocalStorage(path.join(dataDir, 'blobs')) };
}
