// The routing service's way to record generations at volume: record() buffers each generation for
// a few milliseconds and sends what has gathered as one generations.recordBatch call, so that
// thousands of recordings a second cost tens of requests, not thousands. Each caller still gets
// its own answer: record() resolves with what generations.record would have answered for that
// generation, once it is committed, or rejects with that generation's own SwitchyardError.
import { createTRPCClient, httpLink, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { errorLink, switchyardError } from './errors.js';
import type { AppRouter } from './router.js';
import type { SwitchyardClientOptions } from './index.js';

/** One generation, exactly what generations.record takes. */
export type RecordGenerationInput = inferRouterInputs<AppRouter>['generations']['record'];
/** What generations.record answers: `recorded` is false when the id was recorded before (nothing counted twice). */
export type RecordedGeneration = inferRouterOutputs<AppRouter>['generations']['record'];

/** The most generations the server takes in one generations.recordBatch call. */
export const MAX_RECORD_BATCH_SIZE = 1000;

export interface GenerationRecorderOptions extends SwitchyardClientOptions {
  /** How long a recording waits for others to join its request, in ms (default 5). A full batch goes at once. */
  lingerMs?: number;
  /** The most generations in one request (default and at most 1,000). */
  maxBatch?: number;
  /**
   * The most bytes of generations' JSON in one request (default 1,000,000: the server refuses bodies over
   * 1 MiB). A generation larger than this goes alone (and the server refuses it with 413, alone).
   */
  maxBytes?: number;
  /** The most requests under way at once (default 4); recordings beyond them wait in the buffer. */
  maxRequests?: number;
}

interface Pending {
  input: RecordGenerationInput;
  /** Bytes of its JSON, with the comma that separates it from the next. */
  size: number;
  resolve(answer: RecordedGeneration): void;
  reject(error: unknown): void;
}

export class GenerationRecorder {
  readonly #client: TRPCClient<AppRouter>;
  readonly #lingerMs: number;
  readonly #maxBatch: number;
  readonly #maxBytes: number;
  readonly #maxRequests: number;
  #queue: Pending[] = [];
  #queuedBytes = 0;
  /** The oldest buffered recording has waited lingerMs (or flush() asked): send without waiting for a full batch. */
  #due = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #requests = 0;
  #closed = false;
  /** Every recording not yet settled (flush waits for them). */
  readonly #outstanding = new Set<Promise<void>>();

  constructor(options: GenerationRecorderOptions) {
    const base = options.url.replace(/\/+$/, '');
    // Its own client, without tRPC's batch link: each recordBatch call is one request, whose size
    // this recorder bounds (the batch link would put concurrent calls into one body).
    this.#client = createTRPCClient<AppRouter>({
      links: [
        errorLink,
        httpLink({
          url: `${base}/trpc`,
          headers: { authorization: `Bearer ${options.apiKey}` },
          ...(options.fetch ? { fetch: options.fetch } : {}),
        }),
      ],
    });
    this.#lingerMs = atLeast('lingerMs', options.lingerMs ?? 5, 0);
    this.#maxBatch = atLeast('maxBatch', options.maxBatch ?? MAX_RECORD_BATCH_SIZE, 1);
    if (this.#maxBatch > MAX_RECORD_BATCH_SIZE) throw new RangeError(`maxBatch must be at most ${MAX_RECORD_BATCH_SIZE}`);
    this.#maxBytes = atLeast('maxBytes', options.maxBytes ?? 1_000_000, 1);
    this.#maxRequests = atLeast('maxRequests', options.maxRequests ?? 4, 1);
  }

  /**
   * Records one generation with the next request. Resolves once it is committed (`recorded: false`
   * when its id was recorded before); rejects with this generation's own SwitchyardError (its
   * status and message as generations.record would answer them), or with the whole request's when
   * the request failed (no answer, 401, 403, 413, 500...). Do not change `input` until it settles.
   */
  record(input: RecordGenerationInput): Promise<RecordedGeneration> {
    if (this.#closed) return Promise.reject(new Error('the generation recorder is closed'));
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(input)) + 1;
    } catch (error) {
      return Promise.reject(error);
    }
    const answer = new Promise<RecordedGeneration>((resolve, reject) => {
      this.#queue.push({ input, size, resolve, reject });
      this.#queuedBytes += size;
    });
    const forget = () => void this.#outstanding.delete(settled);
    const settled: Promise<void> = answer.then(forget, forget);
    this.#outstanding.add(settled);
    this.#pump();
    return answer;
  }

  /** Sends what is buffered now, and waits until every recording made so far has settled. */
  async flush(): Promise<void> {
    this.#due = this.#queue.length > 0;
    this.#pump();
    await Promise.all([...this.#outstanding]);
  }

  /** Refuses further recordings, sends what is buffered, and waits for every answer. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  /** Sends batches while there is something to send and room for another request. */
  #pump(): void {
    while (this.#queue.length > 0 && this.#requests < this.#maxRequests && (this.#due || this.#full())) {
      void this.#send(this.#take());
    }
    if (this.#queue.length === 0) {
      this.#due = false;
      clearTimeout(this.#timer);
      this.#timer = undefined;
    } else if (!this.#due && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#due = true;
        this.#pump();
      }, this.#lingerMs);
    }
  }

  #full(): boolean {
    return this.#queue.length >= this.#maxBatch || this.#queuedBytes >= this.#maxBytes;
  }

  /** The oldest buffered recordings, up to maxBatch of them and maxBytes (at least one). */
  #take(): Pending[] {
    let count = 0;
    let bytes = 0;
    while (count < this.#queue.length && count < this.#maxBatch) {
      const size = this.#queue[count]!.size;
      if (count > 0 && bytes + size > this.#maxBytes) break;
      bytes += size;
      count++;
    }
    this.#queuedBytes -= bytes;
    return this.#queue.splice(0, count);
  }

  async #send(batch: Pending[]): Promise<void> {
    this.#requests++;
    try {
      const { results } = await this.#client.generations.recordBatch.mutate({ generations: batch.map((p) => p.input) });
      if (results.length !== batch.length) throw new Error(`generations.recordBatch answered ${results.length} results for ${batch.length} generations`);
      batch.forEach((pending, i) => {
        const result = results[i]!;
        if (result.status === 'error') {
          pending.reject(switchyardError(result.error.code, result.error.message, result.error.metadata));
        } else {
          const { status, ...answer } = result;
          pending.resolve({ ...answer, recorded: status === 'recorded' });
        }
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.#requests--;
      this.#pump();
    }
  }
}

function atLeast(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) throw new RangeError(`${name} must be a number >= ${min} (got ${value})`);
  return value;
}

/**
 * A recorder for a routing process: one per process, shared by its request handlers, holding a
 * platform key. See GenerationRecorder.record.
 */
export function createGenerationRecorder(options: GenerationRecorderOptions): GenerationRecorder {
  return new GenerationRecorder(options);
}
