import type { VideoJob as VideoJobRow, VideoOutput as VideoOutputRow } from '@switchyard/db';
import type { CreateVideoJobInput, ListVideoJobsInput, VideoContentInput, VideoJob, VideoJobStatusRecord } from '@switchyard/schema';
import { NotFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Actor, PlatformActor } from '../../access/callers.js';
import type { Uses } from '../../trpc/service-deps.js';
import { platformWorkspace, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import { visibleRows } from '../../access/tenancy.js';
import { pageOf } from '../pages.js';

function videoJobOf(job: VideoJobRow, outputs: VideoOutputRow[]): VideoJob {
  return {
    id: job.id,
    workspace_id: job.workspace_id,
    provider: job.provider,
    model: job.model,
    upstream_job_id: job.upstream_job_id,
    status: job.status,
    prompt: job.prompt,
    outputs: outputs
      .sort((a, b) => a.index - b.index)
      .map((o) => ({
        index: o.index,
        upstream_url: o.upstream_url,
        media_type: o.media_type,
        size_bytes: o.size_bytes === null ? null : Number(o.size_bytes),
      })),
    created_at: job.created_at.toISOString(),
  } satisfies VideoJob;
}

/** Internal: a workspace's video jobs, newest first, optionally only those of one upstream job id. */
export async function listVideoJobs(deps: Uses<'db'>, actor: Actor, input: ListVideoJobsInput) {
  const { db } = deps;
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
  const where = { workspace_id: workspace.id, ...(input.upstream_job_id ? { upstream_job_id: input.upstream_job_id } : {}) };
  return pageOf(
    input,
    (slice) => db.videoJob.findMany({ where, include: { outputs: true }, orderBy: [{ created_at: 'desc' }, { id: 'desc' }], ...slice }),
    () => db.videoJob.count({ where }),
    (job) => videoJobOf(job, job.outputs),
  );
}

/** Internal (platform): records a video job with its outputs (index = position in `outputs`) in the workspace it names. */
export async function createVideoJob(deps: Uses<'db'>, _actor: PlatformActor, input: CreateVideoJobInput): Promise<VideoJob> {
  const { db } = deps;
  const workspace = await platformWorkspace(db, input.workspace_id);
  const key = input.api_key_hash
    ? await db.apiKey.findFirst({ where: { hash: input.api_key_hash, organization_id: workspace.organization_id }, select: { id: true } })
    : null;
  if (input.api_key_hash && !key) throw new NotFound(`key ${input.api_key_hash}`);
  const job = await db.videoJob.create({
    data: {
      id: newId('video'),
      organization_id: workspace.organization_id,
      workspace_id: workspace.id,
      api_key_id: key?.id ?? null,
      provider: input.provider,
      model: input.model,
      upstream_job_id: input.upstream_job_id,
      status: input.status ?? 'completed',
      prompt: input.prompt ?? null,
      outputs: {
        create: input.outputs.map((output, index) => ({
          organization_id: workspace.organization_id,
          index,
          upstream_url: output.upstream_url,
          media_type: output.media_type ?? 'video/mp4',
          size_bytes: output.size_bytes ?? null,
        })),
      },
    },
    include: { outputs: true },
  });
  return videoJobOf(job, job.outputs);
}

/**
 * GET /videos/{jobId}/content: the output `index` of a job the caller can see (management keys: any
 * workspace of their organization; other keys: their own workspace). Unknown job or index: NotFound.
 */
export async function findVideoOutput(deps: Uses<'db'>, actor: Actor, input: VideoContentInput): Promise<VideoOutputRow> {
  const { jobId, index } = input;
  const { organization_id, workspace_id } = visibleRows(actor);
  const output = await deps.db.videoOutput.findFirst({
    where: { index, video_job_id: jobId, organization_id, ...(workspace_id ? { job: { workspace_id } } : {}) },
  });
  if (!output) throw new NotFound(`output ${index} of video job ${jobId}`);
  return output;
}

/** Our job states in the words existing clients poll for (a queued job is "pending"). */
const POLLED_STATUS = { queued: 'pending', in_progress: 'in_progress', completed: 'completed', failed: 'failed' } as const;

/** A polled job: what its status record (videos.router.ts) is made of, its URLs built from them. */
export interface PolledVideoJob {
  id: string;
  status: VideoJobStatusRecord['status'];
  /** Once completed, the indexes of its outputs in order (its content URLs); otherwise null. */
  outputs: number[] | null;
}

/** GET /videos/{jobId}: a job the caller can see (as for its content), with its outputs once completed. */
export async function getVideoJob(deps: Uses<'db'>, actor: Actor, input: { jobId: string }): Promise<PolledVideoJob> {
  const { jobId } = input;
  const { organization_id, workspace_id } = visibleRows(actor);
  const job = await deps.db.videoJob.findFirst({
    where: { id: jobId, organization_id, ...(workspace_id ? { workspace_id } : {}) },
    include: { outputs: { select: { index: true }, orderBy: { index: 'asc' } } },
  });
  if (!job) throw new NotFound(`video job ${jobId}`);
  return {
    id: job.id,
    status: POLLED_STATUS[job.status],
    outputs: job.status === 'completed' ? job.outputs.map((o) => o.index) : null,
  };
}
