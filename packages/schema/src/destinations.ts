// Observability destinations (platform-api.md part 3, D17-D21): a workspace's trace-broadcast
// targets. The record is a union on `type`; only `config` differs. Config keys are camelCase on the
// wire. Secret config values (and every header value) are write-only: answers carry them masked.
import { z } from 'zod';
import { IdentifierSchema, TimestampSchema, dataOf, listOf, paginationQuery } from './common.js';
import { WorkspaceRefSchema } from './workspaces.js';

/** The three generic types, then the 14 hosted services, as existing clients spell them. */
export const DESTINATION_TYPES = [
  'webhook',
  'otel-collector',
  's3',
  'arize',
  'braintrust',
  'clickhouse',
  'datadog',
  'grafana',
  'langfuse',
  'langsmith',
  'newrelic',
  'opik',
  'posthog',
  'ramp',
  'sentry',
  'snowflake',
  'weave',
] as const;
export const DestinationTypeSchema = z.enum(DESTINATION_TYPES).describe('The destination type (exact token)');
export type DestinationType = z.infer<typeof DestinationTypeSchema>;

/**
 * The types this server delivers to (webhook: alerts; otel-collector and s3: generation traces); the
 * others are stored, validated and returned only (their `delivery` field says not_supported).
 */
export const DELIVERED_DESTINATION_TYPES: readonly DestinationType[] = ['webhook', 'otel-collector', 's3'];

/** Required and optional config keys of each type (platform-api.md 3.1). `headers` is optional everywhere. */
export const DESTINATION_CONFIG_KEYS: Record<DestinationType, { required: readonly string[]; optional: readonly string[] }> = {
  webhook: { required: ['url'], optional: ['method'] },
  'otel-collector': { required: ['endpoint'], optional: [] },
  s3: { required: ['bucketName', 'accessKeyId', 'secretAccessKey'], optional: ['region', 'endpoint', 'sessionToken', 'prefix', 'pathTemplate'] },
  arize: { required: ['apiKey', 'spaceKey', 'modelId'], optional: ['baseUrl'] },
  braintrust: { required: ['apiKey', 'projectId'], optional: ['baseUrl'] },
  clickhouse: { required: ['host', 'database', 'username', 'password'], optional: ['table'] },
  datadog: { required: ['apiKey', 'mlApp'], optional: ['url'] },
  grafana: { required: ['apiKey', 'instanceId'], optional: ['baseUrl'] },
  langfuse: { required: ['publicKey', 'secretKey'], optional: ['baseUrl'] },
  langsmith: { required: ['apiKey'], optional: ['endpoint', 'project', 'workspaceId'] },
  newrelic: { required: ['licenseKey'], optional: ['region'] },
  opik: { required: ['apiKey', 'workspace', 'projectName'], optional: [] },
  posthog: { required: ['apiKey'], optional: ['endpoint'] },
  ramp: { required: ['apiKey'], optional: ['baseUrl'] },
  sentry: { required: ['dsn', 'otlpEndpoint'], optional: [] },
  snowflake: { required: ['account', 'token'], optional: ['database', 'schema', 'table', 'warehouse'] },
  weave: { required: ['apiKey', 'entity', 'project'], optional: ['baseUrl'] },
};

/** Config keys whose values are secrets: stored sealed, answered masked. Header values are secrets too. */
export const DESTINATION_SECRET_KEYS: readonly string[] = ['apiKey', 'secretKey', 'password', 'token', 'licenseKey', 'secretAccessKey', 'sessionToken', 'dsn'];

/** Config keys holding a URL the server would send to: absolute https (http only to an allowed loopback host). */
export const DESTINATION_URL_KEYS: readonly string[] = ['url', 'endpoint', 'baseUrl', 'otlpEndpoint'];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/**
 * Headers a destination's `headers` may not set, because the sender owns them: the hop-by-hop and
 * framing headers (a second Content-Length or a Transfer-Encoding beside it is what request
 * smuggling through a proxy in front of a receiver is made of), Host (the URL names the receiver),
 * and what the senders write themselves: Standard Webhooks' webhook-id, -timestamp and -signature,
 * Content-Type, Content-Encoding and User-Agent. Any Proxy-* header too. Compared case-insensitively.
 */
export const DESTINATION_RESERVED_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'host',
  'content-type',
  'content-encoding',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

/** Whether a destination's `headers` may not set this header (DESTINATION_RESERVED_HEADERS, or a Proxy-* header). */
export function isReservedDestinationHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('proxy-') || DESTINATION_RESERVED_HEADERS.includes(lower);
}
/** Extra HTTP headers sent with each delivery: names are HTTP tokens; values have no CR, LF or NUL. */
export const DestinationHeadersSchema = z
  .record(
    z.string().regex(HEADER_NAME, 'an HTTP header name'),
    z
      .string()
      .max(4096)
      .regex(/^[^\r\n\0]*$/, 'no CR, LF or NUL'),
  )
  .refine((headers) => Object.keys(headers).length <= 50, 'at most 50 headers')
  .describe(
    'Extra HTTP headers sent with each delivery; values are answered masked. Not hop-by-hop or framing headers (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade, Content-Length, Expect), Host, nor those the sender sets (webhook-id, webhook-timestamp, webhook-signature, Content-Type, Content-Encoding, User-Agent): 400',
  );

const configValue = (key: string) => {
  if (key === 'method') return z.enum(['POST', 'PUT']).describe('POST (default) or PUT');
  const text = z
    .string()
    .min(1)
    .max(DESTINATION_URL_KEYS.includes(key) ? 2048 : 4096);
  if (DESTINATION_SECRET_KEYS.includes(key)) return text.describe('Secret: answered masked (first 3, "...", last 4; 8 characters or fewer: ****)');
  if (DESTINATION_URL_KEYS.includes(key)) return text.describe('Absolute https URL (http only to a loopback host allowed in UPSTREAM_ALLOWED_HOSTS)');
  return text;
};

/** The config object of a type as a request gives it: required keys, optional keys, headers; nothing else. */
export function destinationConfigSchema(type: DestinationType) {
  const { required, optional } = DESTINATION_CONFIG_KEYS[type];
  const shape: Record<string, z.ZodType> = {};
  for (const key of required) shape[key] = configValue(key);
  for (const key of optional) shape[key] = configValue(key).optional();
  shape.headers = DestinationHeadersSchema.optional();
  return z.object(shape).strict();
}

const FilterRuleSchema = z
  .object({
    field: z
      .string()
      .min(1)
      .max(100)
      .describe(
        'Open set: model, provider, session_id, user_id, api_key_name, finish_reason, input, output, total_cost, total_tokens, prompt_tokens, completion_tokens',
      ),
    operator: z
      .string()
      .min(1)
      .max(50)
      .describe('Open set: equals, not_equals, contains, not_contains, regex, starts_with, ends_with, gt, lt, gte, lte, exists, not_exists'),
    value: z
      .union([z.string().max(1000), z.number()])
      .optional()
      .describe('Absent for exists / not_exists'),
  })
  .strict();
const RuleGroupSchema = z
  .object({
    logic: z.string().min(1).max(20).optional().describe('and (default) or or (open set)'),
    rules: z.array(FilterRuleSchema).max(100),
  })
  .strict();
export const FilterRulesSchema = z
  .object({
    enabled: z.boolean().optional().describe('Absent reads as true'),
    groups: z.array(RuleGroupSchema).max(50),
  })
  .strict()
  .describe('An event is sent when the filter is disabled, or every group matches');
export type FilterRules = z.infer<typeof FilterRulesSchema>;

const RegionsSchema = z
  .array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a lowercase region token'))
  .min(1)
  .max(10)
  .describe('Open set: global, europe, us; eu is stored as europe. Non-empty');
const KeyHashesSchema = z
  .array(z.string().regex(/^[0-9a-f]{64}$/, 'a key hash'))
  .min(1)
  .max(1000)
  .nullable()
  .describe("null = every key; else at least one hash of the organization's keys");
const SamplingRateSchema = z.number().min(0.0001).max(1).describe('0.0001..1; 1 = every event');

const destinationBase = {
  id: z.string().describe('Stable public identifier (UUID)'),
  name: z.string().nullable(),
  workspace_id: z.string(),
  enabled: z.boolean(),
  sampling_rate: z.number(),
  privacy_mode: z.boolean().describe('true: request and response bodies are never sent, only metadata'),
  regions: z.array(z.string()),
  api_key_hashes: z.array(z.string()).nullable(),
  broadcast_generation_cost: z.boolean(),
  broadcast_generation_identity: z.boolean(),
  broadcast_generation_request_context: z.boolean(),
  filter_rules: FilterRulesSchema.nullable(),
  delivery: z
    .enum(['supported', 'not_supported'])
    .describe(
      "Read-only (this API's addition): whether this server delivers events to this type (webhook: alerts; otel-collector and s3: generation traces); other types are stored only",
    ),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
};

/** The config of a type as answers show it: secrets masked; optional keys present when set or defaulted. */
function answeredConfigSchema(type: DestinationType) {
  const { required, optional } = DESTINATION_CONFIG_KEYS[type];
  const shape: Record<string, z.ZodType> = {};
  for (const key of required) shape[key] = DESTINATION_SECRET_KEYS.includes(key) ? z.string().describe('Masked') : z.string();
  for (const key of optional) shape[key] = (DESTINATION_SECRET_KEYS.includes(key) ? z.string().describe('Masked') : z.string()).optional();
  shape.headers = z.record(z.string(), z.string()).optional().describe('Values masked');
  return z.object(shape);
}

/** One record schema per type (named Destination<Type> in the OpenAPI document). */
export const DESTINATION_VARIANTS = DESTINATION_TYPES.map((type) =>
  z.object({ type: z.literal(type), ...destinationBase, config: answeredConfigSchema(type) }).describe(`A ${type} destination`),
);

export const DestinationSchema = z
  .discriminatedUnion(
    'type',
    DESTINATION_VARIANTS as unknown as [
      z.ZodObject<{ type: z.ZodLiteral<DestinationType> } & typeof destinationBase & { config: z.ZodObject<Record<string, z.ZodType>> }>,
    ],
  )
  .describe('An observability destination: a union on type; only config differs');
export type Destination = z.infer<typeof DestinationSchema>;

/** D17 GET /observability/destinations. */
export const ListDestinationsInputSchema = z.object({
  ...paginationQuery({ defaultLimit: 50, maxLimit: 100 }),
  workspace_id: WorkspaceRefSchema.optional().describe("UUID or slug; default: the organization's default workspace"),
});
export type ListDestinationsInput = z.infer<typeof ListDestinationsInputSchema>;
export const ListDestinationsOutputSchema = listOf(DestinationSchema);

const destinationOptions = {
  enabled: z.boolean().optional(),
  privacy_mode: z.boolean().optional(),
  broadcast_generation_cost: z.boolean().optional(),
  broadcast_generation_identity: z.boolean().optional(),
  broadcast_generation_request_context: z.boolean().optional(),
  sampling_rate: SamplingRateSchema.optional(),
  regions: RegionsSchema.optional(),
  api_key_hashes: KeyHashesSchema.optional(),
  filter_rules: FilterRulesSchema.nullable().optional(),
};

const ConfigObjectSchema = z.record(z.string(), z.unknown());

/** D18 POST /observability/destinations. */
export const CreateDestinationInputSchema = z.object({
  type: DestinationTypeSchema,
  name: z.string().min(1).max(200),
  config: ConfigObjectSchema.describe("The type's config, camelCase keys (see Destination); a missing required key is 400 naming it"),
  workspace_id: WorkspaceRefSchema.optional().describe("UUID or slug; default: the organization's default workspace"),
  ...destinationOptions,
});
export type CreateDestinationInput = z.infer<typeof CreateDestinationInputSchema>;
export const DestinationOutputSchema = dataOf(DestinationSchema);

export const GetDestinationInputSchema = z.object({ id: IdentifierSchema.describe('Destination UUID') });

/** D20 PATCH /observability/destinations/{id}: only the fields given change; type and workspace_id are not accepted. */
export const UpdateDestinationInputSchema = z
  .object({
    id: IdentifierSchema.describe('Destination UUID'),
    name: z.string().min(1).max(200).optional(),
    config: ConfigObjectSchema.optional().describe('Partial: keys given replace stored values, keys absent keep theirs; a masked value is ignored'),
    ...destinationOptions,
  })
  .strict();
export type UpdateDestinationInput = z.infer<typeof UpdateDestinationInputSchema>;

/** destinations.secret / rotateSecret (tRPC): a webhook destination's Standard Webhooks signing secret. */
export const DestinationSecretOutputSchema = z.object({ secret: z.string().describe('whsec_ + base64 of 32 random bytes') });

/** Delivery states of one event to one destination (decision 0025). */
export const DELIVERY_STATUSES = ['pending', 'failing', 'delivered', 'dead'] as const;

/** destinations.status (tRPC): how delivery to one destination is going. */
export const DestinationStatusSchema = z.object({
  destination_id: z.string().describe('Destination UUID'),
  enabled: z.boolean().describe('false when turned off by a caller, or by delivery after 24 hours of failed attempts (disabled_reason says which)'),
  delivery: z.enum(['supported', 'not_supported']).describe('Whether this server delivers to this type; not_supported: every count is 0'),
  disabled_reason: z.string().nullable().describe('Why delivery turned the destination off; null when it did not'),
  pending: z.number().int().describe('Deliveries not attempted yet'),
  failing: z.number().int().describe('Deliveries attempted and failed, to be retried'),
  delivered: z.number().int().describe('Deliveries the receiver accepted'),
  dead: z.number().int().describe('Deliveries given up after every retry failed'),
  last_error: z.string().nullable().describe('The error of the latest failed attempt; null when none failed'),
  last_error_at: TimestampSchema.nullable(),
  last_delivered_at: TimestampSchema.nullable(),
  failing_since: TimestampSchema.nullable().describe('Since when every attempt has failed; null when the latest attempt succeeded'),
});
export type DestinationStatus = z.infer<typeof DestinationStatusSchema>;
export const DestinationStatusOutputSchema = dataOf(DestinationStatusSchema);
