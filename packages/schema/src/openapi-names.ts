// The names of the contract's records in the OpenAPI document (docs/openapi.md). A schema with an
// `id` in zod's global registry becomes a named component (`#/components/schemas/<id>`) wherever
// the document uses it, so a client generated from the document gets a named type for it
// (openapi-typescript: `components['schemas']['Key']`). That is zod 4's `.meta({ id })`, written
// here in one list rather than on each declaration: the same registry entry, without reshaping the
// declarations. A test (apps/api/test/http/openapi.test.ts) fails when an answer carries an unnamed
// record, and Redocly's lint runs on the document in `pnpm test`.
import { z } from 'zod';
import { AnalyticsDisplayFormatSchema, AnalyticsMetaSchema, AnalyticsQueryOutputSchema, AnalyticsRowSchema, AnalyticsValueTypeSchema } from './analytics.js';
import { AuditActorKindSchema, AuditEntrySchema, AuditLogPageSchema } from './audit.js';
import { BudgetIntervalSchema, BudgetSchema } from './budgets.js';
import { ByokCredentialSchema, ListByokOutputSchema } from './byok.js';
import { DeletedOutputSchema, ErrorEnvelopeSchema } from './common.js';
import {
  DESTINATION_TYPES,
  DESTINATION_VARIANTS,
  DestinationSchema,
  DestinationStatusSchema,
  DestinationTypeSchema,
  FilterRulesSchema,
  ListDestinationsOutputSchema,
} from './destinations.js';
import {
  ContainerFileListSchema,
  ContainerFileRecordSchema,
  DocumentDeletionSchema,
  DocumentPageSchema,
  FileCompatASchema,
  FileCompatBSchema,
  FileNativeSchema,
  FilePurposeSchema,
  FileSchema,
} from './files.js';
import {
  ActivityItemSchema,
  CreditsSchema,
  FeedbackCategorySchema,
  GenerationContentSchema,
  GenerationFeedbackOutputSchema,
  GenerationSchema,
  MessageSchema,
} from './generations.js';
import {
  BuiltinContentFilterSchema,
  CustomContentFilterSchema,
  GuardrailKeyAssignmentSchema,
  GuardrailMemberAssignmentSchema,
  GuardrailResetIntervalSchema,
  GuardrailSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsOutputSchema,
} from './guardrails.js';
import { DataRegionSchema, KeySchema, LimitResetSchema, ManagedKeySchema } from './keys.js';
import {
  CountModelsOutputSchema,
  EndpointSchema,
  ListModelsOutputSchema,
  ModelEndpointsSchema,
  ModelPricingSchema,
  ModelReasoningSchema,
  ModelSchema,
  PerRequestLimitsSchema,
  PriceSchema,
  ProviderSchema,
  ReasoningEffortSchema,
} from './models.js';
import { ListOrganizationMembersOutputSchema, OrganizationMemberSchema, OrgRoleSchema } from './organization.js';
import {
  ListPresetsOutputSchema,
  PresetConfigSchema,
  PresetSchema,
  PresetVersionDetailSchema,
  PresetVersionSchema,
  PresetWithVersionSchema,
} from './presets.js';
import { AuthorizationCodeSchema, CodeChallengeMethodSchema, ExchangedKeySchema } from './identity.js';
import {
  ImageEndpointSchema,
  ImageModelEndpointsSchema,
  ImageModelSchema,
  ListImageModelsOutputSchema,
  ListUserModelsOutputSchema,
  ListVideoModelsOutputSchema,
  ListZdrEndpointsOutputSchema,
  VideoModelSchema,
} from './media-models.js';
import { ImageCapabilitySchema, ImagePricingLineSchema } from './media-specs.js';
import { ListScimGroupMappingsOutputSchema, ListScimGroupsOutputSchema, ScimGroupMappingSchema, ScimGroupSchema, SyncJobSchema } from './scim.js';
import { ListVideoJobsOutputSchema, VideoJobSchema, VideoJobStatusRecordSchema, VideoJobStatusSchema, VideoOutputSchema } from './videos.js';
import { ListWorkspaceMembersOutputSchema, ListWorkspacesOutputSchema, WorkspaceMemberSchema, WorkspaceRoleSchema, WorkspaceSchema } from './workspaces.js';

/**
 * Component name -> schema. Records and the enums they share by their own name; the answers of
 * paginated lists (`{ data, total_count }`) as `<Record>List`; the error envelope of every non-2xx
 * answer as ErrorEnvelope.
 */
export const OPENAPI_NAMES: Readonly<Record<string, z.ZodType>> = {
  ErrorEnvelope: ErrorEnvelopeSchema,
  Deleted: DeletedOutputSchema,

  Key: KeySchema,
  ManagedKey: ManagedKeySchema,
  LimitReset: LimitResetSchema,
  DataRegion: DataRegionSchema,

  Model: ModelSchema,
  ModelList: ListModelsOutputSchema,
  ModelCount: CountModelsOutputSchema.shape.data,
  ModelPricing: ModelPricingSchema,
  ModelReasoning: ModelReasoningSchema,
  ReasoningEffort: ReasoningEffortSchema,
  Price: PriceSchema,
  ModelEndpoints: ModelEndpointsSchema,
  Endpoint: EndpointSchema,
  Provider: ProviderSchema,
  AuthorizationCode: AuthorizationCodeSchema,
  ExchangedKey: ExchangedKeySchema,
  CodeChallengeMethod: CodeChallengeMethodSchema,
  PerRequestLimits: PerRequestLimitsSchema,
  UserModelList: ListUserModelsOutputSchema,
  ImageModel: ImageModelSchema,
  ImageModelList: ListImageModelsOutputSchema,
  ImageCapability: ImageCapabilitySchema,
  ImagePricingLine: ImagePricingLineSchema,
  ImageEndpoint: ImageEndpointSchema,
  ImageModelEndpoints: ImageModelEndpointsSchema,
  VideoModel: VideoModelSchema,
  VideoModelList: ListVideoModelsOutputSchema,
  ZdrEndpointList: ListZdrEndpointsOutputSchema,

  Generation: GenerationSchema,
  GenerationContent: GenerationContentSchema,
  Message: MessageSchema,
  FeedbackCategory: FeedbackCategorySchema,
  FeedbackResult: GenerationFeedbackOutputSchema.shape.data,
  Credits: CreditsSchema,
  ActivityItem: ActivityItemSchema,

  OrganizationMember: OrganizationMemberSchema,
  OrganizationMemberList: ListOrganizationMembersOutputSchema,
  OrgRole: OrgRoleSchema,

  Workspace: WorkspaceSchema,
  WorkspaceList: ListWorkspacesOutputSchema,
  WorkspaceMember: WorkspaceMemberSchema,
  WorkspaceMemberList: ListWorkspaceMembersOutputSchema,
  WorkspaceRole: WorkspaceRoleSchema,

  Destination: DestinationSchema,
  DestinationList: ListDestinationsOutputSchema,
  DestinationStatus: DestinationStatusSchema,
  DestinationType: DestinationTypeSchema,
  FilterRules: FilterRulesSchema,
  ...Object.fromEntries(
    DESTINATION_TYPES.map((type, i) => [
      `Destination${type.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase())}`,
      DESTINATION_VARIANTS[i]!,
    ]),
  ),

  Budget: BudgetSchema,
  BudgetInterval: BudgetIntervalSchema,

  AuditActorKind: AuditActorKindSchema,
  AuditEntry: AuditEntrySchema,
  AuditLogPage: AuditLogPageSchema,
  ByokCredential: ByokCredentialSchema,
  ByokCredentialList: ListByokOutputSchema,

  Guardrail: GuardrailSchema,
  GuardrailList: ListGuardrailsOutputSchema,
  GuardrailResetInterval: GuardrailResetIntervalSchema,
  CustomContentFilter: CustomContentFilterSchema,
  BuiltinContentFilter: BuiltinContentFilterSchema,
  GuardrailKeyAssignment: GuardrailKeyAssignmentSchema,
  GuardrailKeyAssignmentList: ListGuardrailKeyAssignmentsOutputSchema,
  GuardrailMemberAssignment: GuardrailMemberAssignmentSchema,
  GuardrailMemberAssignmentList: ListGuardrailMemberAssignmentsOutputSchema,

  Preset: PresetSchema,
  PresetList: ListPresetsOutputSchema,
  PresetWithVersion: PresetWithVersionSchema,
  PresetVersion: PresetVersionSchema,
  PresetVersionDetail: PresetVersionDetailSchema,
  PresetConfig: PresetConfigSchema,

  ScimGroupMapping: ScimGroupMappingSchema,
  ScimGroupMappingList: ListScimGroupMappingsOutputSchema,
  ScimGroup: ScimGroupSchema,
  ScimGroupList: ListScimGroupsOutputSchema,
  SyncJob: SyncJobSchema,

  AnalyticsMeta: AnalyticsMetaSchema,
  AnalyticsDisplayFormat: AnalyticsDisplayFormatSchema,
  AnalyticsValueType: AnalyticsValueTypeSchema,
  AnalyticsResult: AnalyticsQueryOutputSchema.shape.data,
  AnalyticsRow: AnalyticsRowSchema,

  File: FileSchema,
  FileNative: FileNativeSchema,
  FileCompatA: FileCompatASchema,
  FileCompatB: FileCompatBSchema,
  FilePurpose: FilePurposeSchema,
  DocumentPage: DocumentPageSchema,
  DocumentDeletion: DocumentDeletionSchema,
  ContainerFileRecord: ContainerFileRecordSchema,
  ContainerFileList: ContainerFileListSchema,

  VideoJob: VideoJobSchema,
  VideoJobList: ListVideoJobsOutputSchema,
  VideoJobStatus: VideoJobStatusSchema,
  VideoJobStatusRecord: VideoJobStatusRecordSchema,
  VideoOutput: VideoOutputSchema,
};

// The registry entry keeps what the schema already carries there (its .describe() text).
for (const [id, schema] of Object.entries(OPENAPI_NAMES)) z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
