import { z } from 'zod';
import { IdentifierSchema, listOf, paginationQuery } from './common.js';

/** Organization roles as the API writes them (compat.md). */
export const OrgRoleSchema = z.enum(['org:admin', 'org:member']);
export type OrgRole = z.infer<typeof OrgRoleSchema>;

export const OrganizationMemberSchema = z
  .object({
    id: z.string().describe('User id'),
    email: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    role: OrgRoleSchema.describe('Role in the organization'),
  })
  .describe('A member of the organization');
export type OrganizationMember = z.infer<typeof OrganizationMemberSchema>;

export const ListOrganizationMembersInputSchema = z.object(paginationQuery({ defaultLimit: 50, maxLimit: 100 }));
export const ListOrganizationMembersOutputSchema = listOf(OrganizationMemberSchema);

const MEMBER_NAME = "This organization's name for the person (default empty); no other organization sees it";

/**
 * Internal (tRPC): add a person to the organization; the user (id and email, the identity shared
 * across organizations) is created when the email is new. Names and role belong to this membership.
 */
export const CreateOrganizationMemberInputSchema = z.object({
  email: z.email().max(320),
  first_name: z.string().max(200).optional().describe(MEMBER_NAME),
  last_name: z.string().max(200).optional().describe(MEMBER_NAME),
  role: OrgRoleSchema.default('org:member'),
});
export type CreateOrganizationMemberInput = z.infer<typeof CreateOrganizationMemberInputSchema>;

/** Internal (tRPC): change a member's organization role and/or this organization's names for them. */
export const UpdateOrganizationMemberInputSchema = z
  .object({
    user_id: IdentifierSchema,
    role: OrgRoleSchema.optional(),
    first_name: z.string().max(200).optional().describe(MEMBER_NAME),
    last_name: z.string().max(200).optional().describe(MEMBER_NAME),
  })
  .refine((input) => input.role !== undefined || input.first_name !== undefined || input.last_name !== undefined, {
    message: 'give role, first_name or last_name',
  });
export type UpdateOrganizationMemberInput = z.infer<typeof UpdateOrganizationMemberInputSchema>;

/** Internal (tRPC): remove a member (and their workspace memberships and guardrail assignments). */
export const RemoveOrganizationMemberInputSchema = z.object({ user_id: IdentifierSchema });
export type RemoveOrganizationMemberInput = z.infer<typeof RemoveOrganizationMemberInputSchema>;
export const RemoveOrganizationMemberOutputSchema = z.object({ removed: z.literal(true) });
