import { z } from 'zod';
import { TimestampSchema, dataOf } from './common.js';

export const FILE_SHAPES = ['native', 'compat_a', 'compat_b'] as const;
export const FileShapeSchema = z.enum(FILE_SHAPES);
export type FileShape = z.infer<typeof FileShapeSchema>;

export const FilePurposeSchema = z.enum([
  'assistants',
  'batch',
  'fine-tune',
  'vision',
  'user_data',
  'evals',
  'assistants_output',
  'batch_output',
  'fine-tune-results',
]);

const nativeFields = {
  id: z.string().describe('Durable document id: "file_" followed by an opaque string'),
  type: z.literal('file'),
  filename: z.string().describe('The file name (last segment of its path in the container)'),
  mime_type: z.string(),
  size_bytes: z.number().int().nonnegative(),
  created_at: TimestampSchema,
  downloadable: z.boolean().describe('Promoted documents are downloadable (GET /files/{file_id}/content); uploaded ones (POST /files) are not'),
};

export const FileNativeSchema = z.object({ _shape: z.literal('native'), ...nativeFields }).describe('File, native shape (the default)');
export const FileCompatASchema = z
  .object({ _shape: z.literal('compat_a'), ...nativeFields })
  .describe('File, compat_a shape (requests with an anthropic-version header)');
export const FileCompatBSchema = z
  .object({
    _shape: z.literal('compat_b'),
    id: z.string().describe('Durable document id: "file_" followed by an opaque string'),
    object: z.literal('file'),
    bytes: z.number().int().nonnegative(),
    created_at: z.number().int().describe('Unix seconds'),
    filename: z.string(),
    purpose: FilePurposeSchema,
    status: z.literal('processed'),
  })
  .describe('File, compat_b shape (OpenAI-style requests)');

export const FileSchema = z
  .discriminatedUnion('_shape', [FileNativeSchema, FileCompatASchema, FileCompatBSchema])
  .describe('A workspace document or container file, in one of three shapes');
export type File = z.infer<typeof FileSchema>;

export const ContainerIdSchema = z
  .string()
  .min(1)
  .max(200)
  .describe('Canonical container id: "sess_" + the sanitised session key, "-r<nonce>" for a restarted session');
export const ContainerFileIdSchema = z.string().min(1).max(2000).describe('"cfile_" + base64url of the file path inside the container');

export const PromoteFileInputSchema = z.object({
  container_id: ContainerIdSchema,
  file_id: ContainerFileIdSchema,
});
export type PromoteFileInput = z.infer<typeof PromoteFileInputSchema>;
/** The path parameters of GET .../content and of the sandbox runner's PUT /internal/containers/.... */
export const ContainerFilePathInputSchema = PromoteFileInputSchema;
/** Promote answers the File record itself, not wrapped in { data } (compat.md). */
export const PromoteFileOutputSchema = FileSchema;

/** Internal (tRPC, platform keys): open a container (sandbox) for a session; the sandbox runner's way in. */
export const OpenContainerInputSchema = z.object({
  session_key: z.string().min(1).max(500).describe('The session key; the container id is derived from it'),
  restart: z.boolean().optional().describe('A restarted session: a new sandbox whose id carries a fresh "-r<nonce>" suffix'),
  workspace_id: z.string().uuid().describe('The workspace the container belongs to (the platform always names it)'),
});
export type OpenContainerInput = z.infer<typeof OpenContainerInputSchema>;

export const ContainerSchema = z.object({
  container_id: ContainerIdSchema,
  workspace_id: z.string(),
  session_key: z.string(),
  created_at: TimestampSchema,
});
export type Container = z.infer<typeof ContainerSchema>;
export const OpenContainerOutputSchema = dataOf(ContainerSchema);

/** What the sandbox runner's upload route answers. */
export const ContainerFileSchema = z.object({
  container_id: ContainerIdSchema,
  file_id: ContainerFileIdSchema,
  path: z.string().describe('Clean relative path inside the sandbox'),
  mime_type: z.string(),
  size_bytes: z.number().int().nonnegative(),
  sha256: z.string(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
});
export type ContainerFile = z.infer<typeof ContainerFileSchema>;

/** B11/B12 (admin-api.md): a container file as existing clients read it. */
export const ContainerFileRecordSchema = z.object({
  id: ContainerFileIdSchema,
  object: z.literal('container.file'),
  container_id: ContainerIdSchema.describe('Echoes the path parameter'),
  path: z.string().describe('Path relative to the container'),
  bytes: z.number().int().nonnegative(),
  created_at: z.number().int().describe('Unix seconds of the last sync'),
  source: z.literal('assistant'),
});
export type ContainerFileRecord = z.infer<typeof ContainerFileRecordSchema>;

export const ContainerFileListSchema = z.object({
  object: z.literal('list'),
  data: z.array(ContainerFileRecordSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable().describe('Pass as `after` for the next page while has_more is true'),
  has_more: z.boolean(),
});
export type ContainerFileList = z.infer<typeof ContainerFileListSchema>;

export const ListContainerFilesInputSchema = z.object({
  container_id: ContainerIdSchema,
  limit: z.number().int().min(1).max(1000).default(100).describe('1..1000, default 100'),
  after: ContainerFileIdSchema.optional().describe("A container file id (normally the previous page's last_id): list strictly after its path"),
});
export type ListContainerFilesInput = z.infer<typeof ListContainerFilesInputSchema>;

export const GetContainerFileInputSchema = z.object({ container_id: ContainerIdSchema, file_id: ContainerFileIdSchema });
export type GetContainerFileInput = z.infer<typeof GetContainerFileInputSchema>;

// ---- Workspace documents (admin-api.md B7-B10) ------------------------------------------------

export const DocumentIdSchema = z.string().min(1).max(200).describe('A document id ("file_" followed by an opaque string)');

/** Query parameters common to B7-B10. */
const documentScope = {
  workspace_id: z.string().min(1).max(200).optional().describe("The workspace to act in (UUID or slug); default: the key's own workspace"),
  provider: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("Store or read the file with that provider, using the caller's credential. Not supported: only the platform's own storage (400)"),
};

export const ListDocumentsInputSchema = z.object({
  ...documentScope,
  limit: z.number().int().min(1).max(1000).default(100).describe('1..1000, default 100'),
  cursor: z.string().min(1).max(500).optional().describe('Opaque: the `cursor` of the previous native page'),
  after: DocumentIdSchema.optional().describe('A file id to list after (compat_b style)'),
  after_id: DocumentIdSchema.optional().describe('A file id to list after (compat_a style)'),
  before_id: DocumentIdSchema.optional().describe('Reverse cursor; not supported by platform storage (400)'),
  order: z.enum(['asc', 'desc']).optional().describe('Platform storage lists oldest first: asc only (desc: 400)'),
});
export type ListDocumentsInput = z.infer<typeof ListDocumentsInputSchema>;

const pageIds = {
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
};
export const DocumentPageSchema = z
  .discriminatedUnion('_shape', [
    z.object({
      _shape: z.literal('native'),
      data: z.array(FileNativeSchema),
      cursor: z.string().nullable().describe('The next page; null at the end'),
      ...pageIds,
    }),
    z.object({ _shape: z.literal('compat_a'), data: z.array(FileCompatASchema), ...pageIds }),
    z.object({ _shape: z.literal('compat_b'), object: z.literal('list'), data: z.array(FileCompatBSchema), ...pageIds }),
  ])
  .describe('A page of workspace documents (bare), in the shape chosen by the request headers');
export type DocumentPage = z.infer<typeof DocumentPageSchema>;

export const DocumentInputSchema = z.object({ file_id: DocumentIdSchema, ...documentScope });
export type DocumentInput = z.infer<typeof DocumentInputSchema>;

/** POST /files: the query of an upload (the bytes are the multipart body's one `file` part). */
export const UploadDocumentQuerySchema = z.object({ ...documentScope });
export type UploadDocumentQuery = z.infer<typeof UploadDocumentQuerySchema>;

export const DocumentDeletionSchema = z
  .discriminatedUnion('_shape', [
    z.object({ _shape: z.literal('native'), id: z.string(), type: z.literal('file_deleted') }),
    z.object({ _shape: z.literal('compat_a'), id: z.string(), type: z.literal('file_deleted') }),
    z.object({ _shape: z.literal('compat_b'), id: z.string(), object: z.literal('file'), deleted: z.literal(true) }),
  ])
  .describe('A deleted document (bare), in the shape chosen by the request headers');
export type DocumentDeletion = z.infer<typeof DocumentDeletionSchema>;
