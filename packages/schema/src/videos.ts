import { z } from 'zod';
import { TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';

export const VideoJobStatusSchema = z.enum(['queued', 'in_progress', 'completed', 'failed']);

const UpstreamUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(4000)
  .describe('Where the upstream provider serves the bytes (http or https)');

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

/** Internal (tRPC): record a video job and its outputs (demo data, tests, the generation worker). */
export const CreateVideoJobInputSchema = z.object({
  workspace_id: z.string().uuid().optional().describe("Defaults to the caller key's workspace"),
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
  workspace_id: z.string().uuid().optional().describe("Defaults to the caller key's workspace"),
  upstream_job_id: z.string().min(1).max(500).optional().describe("Only jobs with this provider job id"),
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
});
export type ListVideoJobsInput = z.infer<typeof ListVideoJobsInputSchema>;
export const ListVideoJobsOutputSchema = listOf(VideoJobSchema);

/** GET /videos/{jobId}/content: the path parameter and the query, as one input. */
export const VideoContentInputSchema = z.object({ jobId: VideoJobIdSchema, ...VideoContentQuerySchema.shape });
export type VideoContentInput = z.infer<typeof VideoContentInputSchema>;
