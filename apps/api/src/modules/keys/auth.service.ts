import type { ApiKey, Db } from '@switchyard/db';
import { Unauthorized } from '../../errors.js';

/** The authenticated caller: its key (row), organization, workspace and user. */
export interface Actor {
  key: ApiKey;
  organizationId: string;
  workspaceId: string;
  userId: string;
}

export async function authenticate(db: Db, keyHash: string | null, now: Date): Promise<Actor> {
  if (!keyHash) throw new Unauthorized('no bearer token');
  const key = await db.apiKey.findUnique({ where: { hash: keyHash } });
  if (!key) throw new Unauthorized('unknown key');
  if (key.disabled) throw new Unauthorized('disabled key');
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) throw new Unauthorized('expired key');
  return { key, organizationId: key.organization_id, workspaceId: key.workspace_id, userId: key.creator_user_id };
}
