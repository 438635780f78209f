// What a catalog file says of image and video models (platform-api.md D1-D3): an image endpoint's
// parameters and prices, a video model's parameters. models.import and demo/catalog.json carry them
// (models.ts); media-models.ts has the answers made of them.
import { z } from 'zod';

const ParameterNameSchema = z.string().min(1).max(100);
/** zod 4's number() refuses Infinity and NaN. */
const finite = z.number();

/** What a parameter of an image endpoint takes (platform-api.md, Capability): a discriminated union on type. */
export const ImageCapabilitySchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('enum'), values: z.array(z.string().min(1).max(200)).min(1).max(200).describe('The parameter takes one of these') }),
    z.strictObject({ type: z.literal('range'), min: finite.describe('Inclusive'), max: finite.describe('Inclusive') }),
    z.strictObject({ type: z.literal('boolean') }).describe('The parameter is accepted; presence is the whole statement'),
  ])
  .describe('What values a parameter takes')
  .refine((c) => c.type !== 'range' || c.min <= c.max, 'a range needs min <= max');
export type ImageCapability = z.infer<typeof ImageCapabilitySchema>;

export const ImageCapabilitiesSchema = z.record(ParameterNameSchema, ImageCapabilitySchema).describe('Parameter name -> what it takes');

export const ImagePricingLineSchema = z.object({
  billable: z.string().min(1).max(100).describe('What is billed: output_image, input_image, input_font, input_reference, input_text (open set)'),
  cost_usd: finite.nonnegative().describe('USD per unit'),
  unit: z.string().min(1).max(100).describe('request, image, megapixel, token (open set)'),
  variant: z.string().min(1).max(100).optional().describe('A quality or size tier'),
});
export type ImagePricingLine = z.infer<typeof ImagePricingLineSchema>;

/** What a catalog file says of an endpoint that generates images. */
export const CatalogImageEndpointSchema = z.object({
  supported_parameters: ImageCapabilitiesSchema.default({}),
  allowed_passthrough_parameters: z.array(ParameterNameSchema).max(200).default([]),
  supports_streaming: z.boolean().default(false),
  pricing: z.array(ImagePricingLineSchema).max(200).default([]),
});
export type CatalogImageEndpoint = z.infer<typeof CatalogImageEndpointSchema>;

const nullableList = <T extends z.ZodType>(item: T) => z.array(item).max(100).nullable().default(null);

/** What a catalog file says of a model that generates video (the Video model record's parameters). */
export const CatalogVideoModelSchema = z.object({
  allowed_passthrough_parameters: z.array(ParameterNameSchema).max(200).default([]),
  supported_durations: nullableList(z.number().int().positive().max(86_400)).describe('Seconds'),
  supported_resolutions: nullableList(z.string().min(1).max(20)).describe('360p, 480p, 720p, 768p, 1080p, 1K, 2K, 4K (open set)'),
  supported_aspect_ratios: nullableList(z.string().min(1).max(20)).describe('16:9, 9:16, 1:1... (open set)'),
  supported_sizes: nullableList(z.string().regex(/^[0-9]{1,5}x[0-9]{1,5}$/, 'a <width>x<height> size')).describe('<width>x<height>'),
  supported_frame_images: nullableList(z.string().min(1).max(50)).describe('first_frame, last_frame (open set)'),
  generate_audio: z.boolean().nullable().default(null),
  seed: z.boolean().nullable().default(null),
  creativity: nullableList(z.number().int()),
  upscale_factor: z.object({ min: finite.nullish(), max: finite.nullish() }).nullable().default(null),
  hugging_face_id: z.string().min(1).max(300).nullable().default(null),
  pricing_skus: z
    .record(z.string().min(1).max(100), z.string().regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, 'must be a non-negative decimal numeral'))
    .nullable()
    .default(null)
    .describe('SKU name -> USD price as a decimal string'),
});
export type CatalogVideoModel = z.infer<typeof CatalogVideoModelSchema>;
