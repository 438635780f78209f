// Many generations with stored content, written straight into the tables (recording 20,000 through
// the API would take minutes and test nothing the export needs): ids gen-bulk-000001.., a millisecond
// apart ending an hour ago, each with a 2,000-character prompt and a 2,000-character completion.
import type { Db } from '@switchyard/db';

export interface GenerationOwner {
  organizationId: string;
  workspaceId: string;
  keyId: string;
  userId: string;
}

export const BULK_PROMPT = 'p'.repeat(2_000);
export const BULK_COMPLETION = 'c'.repeat(2_000);

export async function seedGenerations(db: Db, owner: GenerationOwner, count: number): Promise<void> {
  await db.$executeRaw`
    INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, model, tokens_prompt, tokens_completion, usage, created_at)
    SELECT 'gen-bulk-' || lpad(i::text, 6, '0'), ${owner.organizationId}, ${owner.workspaceId}::uuid, ${owner.keyId}::uuid, ${owner.userId},
           'openai/gpt-4o', 500, 500, 0.001, now() - interval '1 hour' - (${count} - i) * interval '1 ms'
    FROM generate_series(1, ${count}::int) AS i`;
  await db.$executeRaw`
    INSERT INTO generation_contents (generation_id, organization_id, input, completion)
    SELECT 'gen-bulk-' || lpad(i::text, 6, '0'), ${owner.organizationId},
           jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', ${BULK_PROMPT}::text))), ${BULK_COMPLETION}
    FROM generate_series(1, ${count}::int) AS i`;
}
