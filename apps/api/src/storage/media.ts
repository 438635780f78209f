import type { MediaConfig, StorageConfig } from '../config.js';
import { LocalStorage } from './local-storage.js';
import type { BlobStorage } from './storage.js';

export interface MediaDeps extends MediaConfig {
  storage: BlobStorage;
}

/**
 * The store STORAGE_URL names: a local directory (DATA_DIR/blobs by default) or an S3 bucket. The
 * AWS SDK is loaded only for S3 (it costs memory and time at start).
 */
export async function createStorage(config: StorageConfig): Promise<BlobStorage> {
  if (config.kind === 'local') return new LocalStorage(config.root);
  const { createS3Client, S3Storage } = await import('./s3-storage.js');
  return new S3Storage(createS3Client(config), config.bucket, config.prefix);
}

export async function createMedia(storage: StorageConfig, config: MediaConfig): Promise<MediaDeps> {
  return { ...config, storage: await createStorage(storage) };
}
