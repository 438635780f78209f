import type { MediaConfig, StorageConfig } from '../config.js';
import { LocalStorage } from './local-storage.js';
import { createS3Client, S3Storage } from './s3-storage.js';
import type { BlobStorage } from './storage.js';

export interface MediaDeps extends MediaConfig {
  storage: BlobStorage;
}

/** The store STORAGE_URL names: a local directory (DATA_DIR/blobs by default) or an S3 bucket. */
export function createStorage(config: StorageConfig): BlobStorage {
  if (config.kind === 'local') return new LocalStorage(config.root);
  return new S3Storage(createS3Client(config), config.bucket, config.prefix);
}

export function createMedia(storage: StorageConfig, config: MediaConfig): MediaDeps {
  return { ...config, storage: createStorage(storage) };
}
