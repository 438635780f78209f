import { z } from 'zod';
import { TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { SAMPLE_VIDEO_URL } from './samples.js';
import { WorkspaceRefSchema } from './workspaces.js';

export const VideoJobStatusSchema = z.enum(['queued', 'in_progress', 'completed', 'failed']);

export { SAMPLE_VIDEO_URL };

const ProviderUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(4000)
  .refine((value) => {
    const url = new URL(value);
    return url.username === '' && url.password === '';
  }, 'must not carry credentials (user:password@); providers authenticate downloads in the URL path or query');

const UpstreamUrlSchema = z
  .union([z.literal(SAMPLE_VIDEO_URL), ProviderUrlSchema])
  .describe(`Where the upstream provider serves the bytes (http or https, no credentials), or ${SAMPLE_VIDEO_URL} for the server's own sample`);

export const VideoOutputSchema = z.object({
  index: z.number().int().nonnegative().describe('GET /videos/{jobId}/content?index= selects this output'),
  upstream_url: z.string(),
  media_type: z.string(),
  size_bytes: z.number().int().nonnegative().nullable(),
});

export const VideoJobSchema = z.object({
  id: z.string().describe('"video_" followed by an opaque string'),
  workspace_id: z.string(),
  provider: z.string(),
  model: z.string(),
  upstream_job_id: z.string(),
  status: VideoJobStatusSchema,
  prompt: z.string().nullable(),
  outputs: z.array(VideoOutputSchema),
  created_at: TimestampSchema,
});
export type VideoJob = z.infer<typeof VideoJobSchema>;

/** Internal (tRPC, platform keys): record a video job and its outputs (the video service, demo data, tests). */
export const CreateVideoJobInputSchema = z.object({
  workspace_id: z.string().uuid().describe('The workspace the job belongs to (the platform always names it)'),
  api_key_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe("SHA-256 of the key that requested the video, when one did; it must belong to the workspace's organization"),
  provider: z.string().min(1).max(200),
  model: z.string().min(1).max(200),
  upstream_job_id: z.string().min(1).max(500),
  status: VideoJobStatusSchema.optional().describe('Defaults to completed'),
  prompt: z.string().max(100_000).nullable().optional(),
  outputs: z
    .array(
      z.object({
        upstream_url: UpstreamUrlSchema,
        media_type: z
          .string()
          .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a media type such as video/mp4')
          .max(200)
          .optional()
          .describe('Defaults to video/mp4'),
        size_bytes: z.number().int().nonnegative().nullable().optional(),
      }),
    )
    .min(1)
    .max(100)
    .describe('In order: the first is index 0'),
});
export type CreateVideoJobInput = z.infer<typeof CreateVideoJobInputSchema>;
export const CreateVideoJobOutputSchema = dataOf(VideoJobSchema);

export const VideoJobIdSchema = z.string().min(1).max(200).describe('Video job id: "video_" followed by an opaque string');

/** GET /videos/{jobId}/content query: `index` (integer >= 0, default 0) picks the job's output. */
export const VideoContentQuerySchema = z.object({
  index: z
    .string()
    .regex(/^\d{1,9}$/, 'an integer >= 0')
    .transform(Number)
    .default(0)
    .describe('Which output of the job (0 = the first)'),
});

/** Internal (tRPC): the video jobs of a workspace, newest first, optionally only those of one upstream job. */
export const ListVideoJobsInputSchema = z.object({
  workspace_id: WorkspaceRefSchema.optional().describe("Workspace UUID or slug; defaults to the caller key's workspace"),
  upstream_job_id: z.string().min(1).max(500).optional().describe('Only jobs with this provider job id'),
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListVideoJobsInput = z.infer<typeof ListVideoJobsInputSchema>;
export const ListVideoJobsOutputSchema = listOf(VideoJobSchema);

/** B13 GET /videos/{jobId}: a video job as existing clients poll it (bare). */
export const VideoJobStatusRecordSchema = z.object({
  id: z.string().describe('The job id of the path'),
  polling_url: z.string().describe('URL of this status resource'),
  status: z.string().describe('pending, in_progress, completed, failed, cancelled, expired (open set); a queued job is pending'),
  unsigned_urls: z.array(z.string()).optional().describe('Content URLs (GET /videos/{jobId}/content?index=N), once completed'),
  error: z.string().optional().describe('On failure'),
});
export type VideoJobStatusRecord = z.infer<typeof VideoJobStatusRecordSchema>;
export const GetVideoJobInputSchema = z.object({ jobId: VideoJobIdSchema });
/** GET /videos/{jobId}/content: the path parameter and the query, as one input. */
export const VideoContentInputSchema = z.object({ jobId: VideoJobIdSchema, ...VideoContentQuerySchema.shape });
export type VideoContentInput = z.infer<typeof VideoContentInputSchema>;
