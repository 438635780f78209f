// The organization's prepaid credit balance: recorded spend draws it down (generations.service.ts);
// while it is negative, GET /generation answers 402 with this link.
import { Prisma, type Db } from '@switchyard/db';
import type { AddCreditsInput, CreditBalance } from '@switchyard/schema';
import { platformOrganization } from '../../access/workspaces.js';

/** Where a 402 sends people to add credits. The one place this link is written. */
export const ADD_CREDITS_URL = 'https://switchyard.dev/settings/credits';

/** Internal (platform, billing): adds prepaid credit to the organization it names. */
export async function addCredits(db: Db, input: AddCreditsInput): Promise<CreditBalance> {
  await platformOrganization(db, input.organization_id);
  const organization = await db.organization.update({
    where: { id: input.organization_id },
    data: { credit_balance: { increment: new Prisma.Decimal(input.amount) } },
    select: { credit_balance: true },
  });
  return { credit_balance: organization.credit_balance.toNumber() };
}
