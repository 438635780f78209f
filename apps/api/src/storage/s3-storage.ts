// A BlobStorage in an S3-compatible bucket (STORAGE_URL=s3://bucket[/prefix]), shared by every
// replica. put(): the body streams through a byte counter and SHA-256 into @aws-sdk/lib-storage's
// Upload, which sends one PutObject for small bodies and a multipart upload (5 MiB parts, two in
// flight) for larger ones, so memory stays bounded whatever the size. S3 makes an object visible
// only once PutObject or CompleteMultipartUpload succeeds: readers see the whole object or none. A
// failed upload is aborted (its parts freed); one a crash abandoned is removed by the storage sweep.
// get(): GetObject streamed, with a Range when asked for one.
import '../lib/aws-sdk-notice.js';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  paginateListObjectsV2,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3StorageConfig } from '../config.js';
import { DomainError, Invalid, NotFound, Unavailable } from '../lib/errors.js';
import {
  assertStorageKey,
  type BlobStorage,
  type GetOptions,
  type PutOptions,
  type PutResult,
  PutMeter,
  type StoredEntry,
  type StoredObject,
  type TemporaryUpload,
} from './storage.js';

/** lib-storage's smallest part; parts in flight at once. Memory held by one upload: about (2 + 1) x 5 MiB. */
const PART_SIZE = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** The S3 client for a configuration: the AWS SDK's standard variables, as config.ts read them. */
export function createS3Client(config: S3StorageConfig): S3Client {
  return new S3Client({
    ...(config.region ? { region: config.region } : {}),
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    forcePathStyle: config.forcePathStyle,
    // Checksums only where S3 requires them: many S3-compatible services do not accept the
    // streaming (aws-chunked) checksums the SDK otherwise adds. Integrity is checked end to end
    // with our own SHA-256 instead.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A store that does not answer is an outage (503), not a request that hangs forever.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
  });
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** Anything the store (or the way to it) refused is the storage being unavailable. */
function unavailable(error: unknown, what: string): unknown {
  if (error instanceof DomainError) return error;
  const name = error instanceof Error ? error.name : String(error);
  const status = statusOf(error);
  return new Unavailable(`storage ${what} failed: ${name}${status ? ` (${status})` : ''}`);
}

const isNotFound = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || statusOf(error) === 404);

export class S3Storage implements BlobStorage {
  readonly #client: S3Client;
  readonly #bucket: string;
  /** '' or segments ending with '/'. */
  readonly #prefix: string;

  constructor(client: S3Client, bucket: string, prefix = '') {
    this.#client = client;
    this.#bucket = bucket;
    this.#prefix = prefix;
  }

  get location(): string {
    return `s3://${this.#bucket}/${this.#prefix}`;
  }

  #objectKey(key: string): string {
    assertStorageKey(key);
    return `${this.#prefix}${key}`;
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<PutResult> {
    const objectKey = this.#objectKey(key);
    const meter = new PutMeter(options);
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        try {
          meter.add(chunk);
        } catch (error) {
          return callback(error as Error);
        }
        callback(null, chunk);
      },
    });
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: objectKey, Body: counted },
      partSize: PART_SIZE,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    // A failing source (or the size limit) fails the feeding side with its own error, and the
    // upload then fails too. A failing store fails the upload first: we then destroy `counted` with
    // that error (`injected`), so that the feeding side stops.
    let feedingError: unknown;
    let uploadError: unknown;
    let injected: Error | undefined;
    const feeding = pipeline(body, counted).catch((error: unknown) => {
      feedingError = error ?? new Error('the source failed');
    });
    const uploading = upload.done().catch((error: unknown) => {
      uploadError = error ?? new Error('the upload failed');
      if (!counted.destroyed) {
        injected = error instanceof Error ? error : new Error(String(error));
        counted.destroy(injected);
      }
    });
    // Both settle before we answer: a failed upload has been aborted (its parts freed) by then.
    await Promise.all([feeding, uploading]);
    if (feedingError === undefined && uploadError === undefined) return meter.result();
    if ('destroy' in body && typeof body.destroy === 'function') body.destroy();
    if (feedingError !== undefined && feedingError !== injected) throw feedingError;
    throw unavailable(uploadError ?? feedingError, 'write');
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject> {
    const { range } = options;
    if (range && range.end < range.start) throw new Invalid(`range ${range.start}-${range.end}`);
    const objectKey = this.#objectKey(key);
    try {
      const out = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const stream = out.Body as Readable;
      if (!range) return { size: Number(out.ContentLength), stream };
      // "bytes <start>-<end>/<size>"; a store that ignored the Range answers the whole object.
      const served = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(out.ContentRange ?? '');
      if (!served) return { size: Number(out.ContentLength), range: { start: 0, end: Number(out.ContentLength) - 1 }, stream };
      return { size: Number(served[3]), range: { start: Number(served[1]), end: Number(served[2]) }, stream };
    } catch (error) {
      if (isNotFound(error)) throw new NotFound(`no stored object ${key}`);
      if (statusOf(error) === 416) throw new Invalid(`range ${range?.start}-${range?.end} not satisfiable`);
      throw unavailable(error, 'read');
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const objectKey = this.#objectKey(key);
    try {
      const out = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      return { size: Number(out.ContentLength) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw unavailable(error, 'stat');
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.#objectKey(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
    } catch (error) {
      if (isNotFound(error)) return;
      throw unavailable(error, 'delete');
    }
  }

  async *list(prefix: string): AsyncIterable<StoredEntry> {
    const pages = paginateListObjectsV2({ client: this.#client }, { Bucket: this.#bucket, Prefix: `${this.#prefix}${prefix}` });
    try {
      for await (const page of pages) {
        for (const object of page.Contents ?? []) {
          if (!object.Key) continue;
          yield { key: object.Key.slice(this.#prefix.length), size: Number(object.Size ?? 0), modifiedAt: object.LastModified ?? new Date(0) };
        }
      }
    } catch (error) {
      throw unavailable(error, 'list');
    }
  }

  async *listTemporary(): AsyncIterable<TemporaryUpload> {
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      for (;;) {
        const page = await this.#client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.#bucket,
            Prefix: this.#prefix || undefined,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
        for (const upload of page.Uploads ?? []) {
          if (!upload.Key || !upload.UploadId) continue;
          yield {
            id: JSON.stringify([upload.Key, upload.UploadId]),
            key: upload.Key.slice(this.#prefix.length),
            since: upload.Initiated ?? new Date(0),
          };
        }
        if (!page.IsTruncated) return;
        keyMarker = page.NextKeyMarker;
        uploadIdMarker = page.NextUploadIdMarker;
      }
    } catch (error) {
      throw unavailable(error, 'list');
    }
  }

  async removeTemporary(id: string): Promise<void> {
    const [objectKey, uploadId] = JSON.parse(id) as [string, string];
    try {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: objectKey, UploadId: uploadId }));
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchUpload' || statusOf(error) === 404)) return;
      throw unavailable(error, 'delete');
    }
  }
}
