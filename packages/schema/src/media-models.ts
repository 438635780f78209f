// Image and video models of the catalog (platform-api.md D1-D3), the endpoints that preview
// zero-data-retention enforcement (D5), and the catalog as a key sees it (D4).
import { z } from 'zod';
import { ImageCapabilitiesSchema, ImagePricingLineSchema } from './media-specs.js';
import { EndpointSchema, ModelSchema } from './models.js';

// ---- Answers ----------------------------------------------------------------------------------

export const ImageModelSchema = z
  .object({
    id: z.string().describe('<author>/<slug>'),
    name: z.string(),
    description: z.string(),
    created: z.number().int().describe('Unix seconds'),
    architecture: z.object({ input_modalities: z.array(z.string()), output_modalities: z.array(z.string()) }),
    endpoints: z.string().describe("Relative URL of the model's image endpoints (GET /images/models/{author}/{slug}/endpoints)"),
    supported_parameters: ImageCapabilitiesSchema.describe('The union over all endpoints (each endpoint has the per-endpoint truth)'),
    supports_streaming: z.boolean().describe('At least one endpoint streams'),
  })
  .describe('A model that generates images');
export type ImageModel = z.infer<typeof ImageModelSchema>;
export const ListImageModelsOutputSchema = z.object({ data: z.array(ImageModelSchema) });
export type ListImageModelsOutput = z.infer<typeof ListImageModelsOutputSchema>;

export const ImageEndpointSchema = z
  .object({
    provider_name: z.string(),
    provider_slug: z.string(),
    provider_tag: z.string().nullable().describe('Tag a request can use to select this endpoint'),
    supported_parameters: ImageCapabilitiesSchema.describe('Definitive for this endpoint'),
    allowed_passthrough_parameters: z.array(z.string()).describe('Provider-specific options a request may pass through'),
    supports_streaming: z.boolean(),
    pricing: z.array(ImagePricingLineSchema).describe('May be empty'),
  })
  .describe("One provider's offer of an image model");
export type ImageEndpoint = z.infer<typeof ImageEndpointSchema>;
export const ImageModelEndpointsSchema = z.object({ id: z.string().describe('The model id of the path'), endpoints: z.array(ImageEndpointSchema) });
export type ImageModelEndpoints = z.infer<typeof ImageModelEndpointsSchema>;

export const VideoModelSchema = z
  .object({
    id: z.string(),
    canonical_slug: z.string(),
    name: z.string(),
    created: z.number().int().describe('Unix seconds'),
    description: z.string(),
    allowed_passthrough_parameters: z.array(z.string()),
    supported_durations: z.array(z.number().int()).nullable(),
    supported_resolutions: z.array(z.string()).nullable(),
    supported_aspect_ratios: z.array(z.string()).nullable(),
    supported_sizes: z.array(z.string()).nullable(),
    supported_frame_images: z.array(z.string()).nullable(),
    generate_audio: z.boolean().nullable(),
    seed: z.boolean().nullable(),
    creativity: z.array(z.number().int()).nullable(),
    upscale_factor: z.object({ min: z.number().nullish(), max: z.number().nullish() }).nullable(),
    hugging_face_id: z.string().nullable(),
    pricing_skus: z.record(z.string(), z.string()).nullable(),
  })
  .describe('A model that generates video');
export type VideoModel = z.infer<typeof VideoModelSchema>;
export const ListVideoModelsOutputSchema = z.object({ data: z.array(VideoModelSchema) });
export type ListVideoModelsOutput = z.infer<typeof ListVideoModelsOutputSchema>;

/** GET /endpoints/zdr: every endpoint of the catalog whose provider keeps no prompt or completion. */
export const ListZdrEndpointsOutputSchema = z.object({ data: z.array(EndpointSchema) });
export type ListZdrEndpointsOutput = z.infer<typeof ListZdrEndpointsOutputSchema>;

export const ListUserModelsInputSchema = z.object({
  offset: z.number().int().min(0).nullish().describe('Default 0'),
  limit: z.number().int().min(1).max(1000).nullish().describe('1..1000, default 500'),
  output_modalities: z
    .string()
    .max(2000)
    .optional()
    .describe('Comma-separated from text, image, embeddings, audio, video, rerank, speech, transcription, or `all`; default text'),
});
export type ListUserModelsInput = z.infer<typeof ListUserModelsInputSchema>;

export const ListUserModelsOutputSchema = z.object({
  data: z.array(ModelSchema),
  total_count: z.number().int().describe('Every model that passes the filters, not only this page'),
  links: z.object({ next: z.string().nullable().describe('URL of the next page; null on the last') }),
});
export type ListUserModelsOutput = z.infer<typeof ListUserModelsOutputSchema>;
