// The organization's prepaid credit balance: recorded spend draws it down (generations.service.ts);
// while it is negative, GET /generation answers 402 with this link.
import { Prisma } from '@switchyard/db';
import type { AddCreditsInput, CreditBalance, Credits } from '@switchyard/schema';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { platformOrganization } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfPlatform } from '../audit/audit.js';

/** Where a 402 sends people to add credits. The one place this link is written. */
export const ADD_CREDITS_URL = 'https://switchyard.dev/settings/credits';

/** Internal (platform, billing): adds prepaid credit to the organization it names. */
export async function addCredits(deps: Uses<'db' | Audited>, actor: PlatformActor, input: AddCreditsInput): Promise<CreditBalance> {
  const { db } = deps;
  const audit = auditOfPlatform(actor, deps);
  await platformOrganization(db, input.organization_id);
  const organization = await db.$transaction(async (tx) => {
    const organization = await tx.organization.update({
      where: { id: input.organization_id },
      data: { credit_balance: { increment: new Prisma.Decimal(input.amount) }, total_credits: { increment: new Prisma.Decimal(input.amount) } },
      select: { credit_balance: true },
    });
    const after = organization.credit_balance.toNumber();
    await appendAudit(tx, audit, {
      action: 'generations.addCredits',
      targetType: 'organization',
      targetId: input.organization_id,
      organizationId: input.organization_id,
      changes: { before: { credit_balance: after - input.amount }, after: { credit_balance: after, amount: input.amount } },
    });
    return organization;
  });
  return { credit_balance: organization.credit_balance.toNumber() };
}

/** GET /credits: the organization's lifetime credit added and spend recorded, in USD. */
export async function getCredits(deps: Uses<'db'>, actor: Actor): Promise<Credits> {
  const organization = await deps.db.organization.findUniqueOrThrow({
    where: { id: actor.organizationId },
    select: { total_credits: true, total_usage: true },
  });
  return { total_credits: organization.total_credits.toNumber(), total_usage: organization.total_usage.toNumber() };
}
