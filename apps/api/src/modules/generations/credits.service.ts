// The organization's prepaid credit balance: recorded spend draws it down (generations.service.ts);
// while it is negative, GET /generation answers 402 with this link.
import { Prisma, type Db } from '@switchyard/db';
import type { AddCreditsInput, CreditBalance } from '@switchyard/schema';
import type { Actor } from '../keys/auth.service.js';

/** Where a 402 sends people to add credits. The one place this link is written. */
export const ADD_CREDITS_URL = 'https://switchyard.dev/settings/credits';

/** Internal: adds prepaid credit to the caller's organization. */
export async function addCredits(db: Db, actor: Actor, input: AddCreditsInput): Promise<CreditBalance> {
  const organization = await db.organization.update({
    where: { id: actor.organizationId },
    data: { credit_balance: { increment: new Prisma.Decimal(input.amount) } },
    select: { credit_balance: true },
  });
  return { credit_balance: organization.credit_balance.toNumber() };
}
