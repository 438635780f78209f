// First start: an empty database gets a platform key, and an organization with its `default`
// workspace, an owner (org:admin) and a management key. Runs under an advisory lock, so two servers
// starting at once create one of each between them, and a restart creates nothing. No key starts it:
// server.ts runs it as SERVER_ACTOR.
import type { PlatformActor } from '../../access/callers.js';
import type { Uses } from '../../trpc/service-deps.js';
import { generatePlatformKey, hashApiKey, maskApiKey } from '../../access/key-format.js';
import { createOrganizationIn } from './organization-setup.js';

const BOOTSTRAP_LOCK = 0x5359_0001; // "SY" 1

export interface BootstrapOptions {
  /** The first organization's management key secret; generated when absent. */
  managementKey?: string | undefined;
  /** A platform key secret that must exist (SWITCHYARD_PLATFORM_KEY); one is generated when absent and none exists. */
  platformKey?: string | undefined;
  ownerEmail?: string;
}

/** A secret made (or registered) by this start; `generated` when the server made it up. */
export interface BootstrapSecret {
  secret: string;
  label: string;
  generated: boolean;
}

export interface BootstrapResult {
  organization?: BootstrapSecret & { organizationId: string };
  platform?: BootstrapSecret;
}

export async function bootstrap(deps: Uses<'db'>, _actor: PlatformActor, input: BootstrapOptions = {}): Promise<BootstrapResult> {
  return deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
    const result: BootstrapResult = {};

    const wanted = input.platformKey;
    if (wanted ? !(await tx.platformKey.findUnique({ where: { hash: hashApiKey(wanted) } })) : (await tx.platformKey.count()) === 0) {
      const secret = wanted ?? generatePlatformKey();
      await tx.platformKey.create({
        data: { hash: hashApiKey(secret), label: maskApiKey(secret), name: wanted ? 'SWITCHYARD_PLATFORM_KEY' : 'Bootstrap platform key' },
      });
      result.platform = { secret, label: maskApiKey(secret), generated: !wanted };
    }

    if ((await tx.organization.count()) === 0) {
      const created = await createOrganizationIn(tx, {
        name: 'Switchyard',
        owner_email: input.ownerEmail ?? 'owner@switchyard.local',
        owner_first_name: 'Owner',
        managementKey: input.managementKey,
      });
      result.organization = {
        organizationId: created.organization_id,
        secret: created.management_key,
        label: maskApiKey(created.management_key),
        generated: !input.managementKey,
      };
    }
    return result;
  });
}
