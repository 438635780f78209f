// Seeds a realistic organization with set-based SQL (INSERT ... SELECT generate_series), straight
// into the tables of prisma/schema.prisma, so that even the large size takes seconds. The bench
// key's daily rollups (key_usage_daily) and lifetime totals (api_keys.usage) are computed from the
// seeded generations, so GET /key agrees with what GET /generation shows.
import { rollupCtes } from '@switchyard/api/statements';
import type { Db } from '@switchyard/db';

export interface SeedSize {
  /** Generations of the bench key. */
  generations: number;
  /** Extra API keys of the organization (beside the bootstrap and bench keys). */
  keys: number;
  /** Organization members, the owner included. */
  members: number;
  /** Guardrails of the default workspace. */
  guardrails: number;
  /** Guardrail assignments: half keys, half members. */
  assignments: number;
  /** Models of the catalog, the demo catalog included. */
  models: number;
}

export const SIZES: Record<'small' | 'large', SeedSize> = {
  // GET /organization/members?offset=4000 needs more than 4,000 members at both sizes; the large
  // size's ?offset=99900 a 100,000-member organization.
  small: { generations: 1_000, keys: 100, members: 5_000, guardrails: 20, assignments: 200, models: 31 },
  large: { generations: 1_000_000, keys: 10_000, members: 100_000, guardrails: 20, assignments: 2_000, models: 300 },
};

export interface SeedTarget {
  organizationId: string;
  workspaceId: string;
  ownerUserId: string;
  /** The regular key whose generations are seeded (and read by the scenarios). */
  benchKeyId: string;
}

/** Models that seeded generations name (all in the demo catalog, all priced above zero). */
const GENERATION_MODELS = ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-flash', 'deepseek/deepseek-chat-v3.1'];
/** Seeded generations span this many days back from now. */
const SPAN_DAYS = 90;

export const seededGenerationId = (i: number): string => `gen-bench-${String(i).padStart(7, '0')}`;

export async function seed(db: Db, t: SeedTarget, size: SeedSize, log: (line: string) => void): Promise<void> {
  const step = async (label: string, sql: string, ...params: unknown[]) => {
    const started = performance.now();
    const rows = await db.$executeRawUnsafe(sql, ...params);
    log(`  ${label}: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };

  // Catalog: the demo catalog is imported through the API beforehand; the rest is generated, one in
  // ten an embeddings model.
  const extraModels = Math.max(0, size.models - (await db.model.count()));
  await step(
    'models',
    `INSERT INTO models (id, lookup, author, slug, canonical_slug, name, description, created, context_length,
        input_modalities, output_modalities, tokenizer, pricing_prompt, pricing_completion, top_context_length,
        top_max_completion_tokens, supported_parameters, updated_at)
     SELECT 'bench/model-' || i, 'bench/model-' || i, 'bench', 'model-' || i, 'bench/model-' || i || '-2025',
        'Bench: Model ' || i, 'A generated catalog entry.', 1735689600 + i, 32768,
        ARRAY['text'], CASE WHEN i % 10 = 0 THEN ARRAY['embeddings'] ELSE ARRAY['text'] END, 'Other',
        '0.000001', CASE WHEN i % 10 = 0 THEN '0' ELSE '0.000002' END, 32768, 4096,
        ARRAY['max_tokens', 'temperature'], now()
     FROM generate_series(1, $1::int) AS i`,
    extraModels,
  );

  // People: users, each a member of the organization, oldest first in a stable order.
  const members = size.members - 1;
  await step(
    'users',
    `INSERT INTO users (id, email, created_at, updated_at)
     SELECT 'user_bench_' || i, 'member' || i || '@bench.example', now(), now()
     FROM generate_series(1, $1::int) AS i`,
    members,
  );
  await step(
    'organization members',
    `INSERT INTO organization_members (id, organization_id, user_id, first_name, last_name, role, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'user_bench_' || i, 'First' || i, 'Last' || i,
        CASE WHEN i % 50 = 0 THEN 'org:admin' ELSE 'org:member' END::org_role,
        now() - interval '1 day' + i * interval '1 second', now()
     FROM generate_series(1, $2::int) AS i`,
    t.organizationId,
    members,
  );

  // Keys: secrets are sk-sy-v1- + 64 hex (two md5s); only their SHA-256 is stored, as the server does.
  await step(
    'api keys',
    `INSERT INTO api_keys (id, organization_id, workspace_id, creator_user_id, hash, label, name, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2::uuid, 'user_bench_' || (1 + i % $4::int),
        encode(sha256(convert_to(s, 'UTF8')), 'hex'), 'sk-sy-v1-' || substr(s, 10, 3) || '...' || right(s, 3),
        'bench key ' || i, now() - interval '30 days' + i * interval '1 second', now()
     FROM generate_series(1, $3::int) AS i,
          LATERAL (SELECT 'sk-sy-v1-' || md5('bench-a' || i) || md5('bench-b' || i) AS s) AS secret`,
    t.organizationId,
    t.workspaceId,
    size.keys,
    Math.max(1, members),
  );

  await step(
    'guardrails',
    `INSERT INTO guardrails (id, organization_id, workspace_id, name, description, allowed_providers, limit_usd,
        reset_interval, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2::uuid, 'guardrail ' || i, 'Seeded by the bench',
        CASE WHEN i % 2 = 0 THEN '["openai", "anthropic"]'::jsonb END, 100 + i, 'monthly'::limit_reset,
        now() - interval '10 days' + i * interval '1 minute', now()
     FROM generate_series(1, $3::int) AS i`,
    t.organizationId,
    t.workspaceId,
    size.guardrails,
  );
  // Assignments: keys and members spread over the guardrails (the bench key on none of them).
  await step(
    'guardrail key assignments',
    `INSERT INTO guardrail_key_assignments (id, organization_id, guardrail_id, api_key_id, assigned_by, created_at)
     SELECT gen_random_uuid(), $1, g.id, k.id, $2, now()
     FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS n FROM guardrails WHERE organization_id = $1) AS g
     JOIN (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS n FROM api_keys
           WHERE organization_id = $1 AND name LIKE 'bench key %' ORDER BY created_at, id LIMIT $3::int) AS k
       ON k.n % $4::int = g.n`,
    t.organizationId,
    t.ownerUserId,
    Math.ceil(size.assignments / 2),
    size.guardrails,
  );
  await step(
    'guardrail member assignments',
    `INSERT INTO guardrail_member_assignments (id, organization_id, guardrail_id, user_id, assigned_by, created_at)
     SELECT gen_random_uuid(), $1, g.id, 'user_bench_' || u.i, $2, now()
     FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS n FROM guardrails WHERE organization_id = $1) AS g
     JOIN generate_series(1, LEAST($3::int, $5::int)) AS u(i) ON u.i % $4::int = g.n`,
    t.organizationId,
    t.ownerUserId,
    Math.floor(size.assignments / 2),
    size.guardrails,
    members,
  );

  // Generations of the bench key, spread evenly over the last SPAN_DAYS days.
  await step(
    'generations',
    `INSERT INTO generations (id, organization_id, workspace_id, api_key_id, user_id, request_id, upstream_id, model,
        provider_name, router, api_type, app_id, origin, data_region, finish_reason, native_finish_reason, streamed,
        latency, generation_time, moderation_latency, tokens_prompt, tokens_completion, native_tokens_prompt,
        native_tokens_completion, native_tokens_reasoning, native_tokens_cached, num_fetches, total_cost, usage, created_at)
     SELECT 'gen-bench-' || lpad(i::text, 7, '0'), $1, $2::uuid, $3::uuid, $4, 'req-' || i, 'up-' || i,
        ($5::text[])[1 + i % cardinality($5::text[])], 'Provider ' || (i % 7), 'default', 'completions', 1000 + i % 5,
        'https://app.example', 'global', 'stop', 'stop', i % 2 = 0,
        200 + i % 800, 150 + i % 700, 5 + i % 20, 100 + i % 900, 20 + i % 400, 100 + i % 900, 20 + i % 400, i % 3, i % 50, 0,
        (1 + i % 100) * 0.00001, (1 + i % 100) * 0.00001,
        now() - ($6::int * interval '1 day') * (i::float8 / $7::int)
     FROM generate_series(1, $7::int) AS i`,
    t.organizationId,
    t.workspaceId,
    t.benchKeyId,
    t.ownerUserId,
    GENERATION_MODELS,
    SPAN_DAYS,
    size.generations,
  );

  // What recording would have maintained: the key's daily rollups (spend, activity) and lifetime total, and the
  // organization's balance (a large prepaid credit minus what was spent).
  await step(
    'key_usage_daily rollups',
    `INSERT INTO key_usage_daily (api_key_id, day, organization_id, usage, byok_usage, request_count, free_request_count)
     SELECT api_key_id, (created_at AT TIME ZONE 'UTC')::date, organization_id, sum(usage), 0, count(*), count(*) FILTER (WHERE is_free)
     FROM generations WHERE api_key_id = $1::uuid GROUP BY 1, 2, 3`,
    t.benchKeyId,
  );
  // The hourly analytics rollup, by the very statement fragment the recorder runs.
  await step(
    'analytics_hourly rollups',
    `WITH seeded AS (SELECT * FROM generations WHERE organization_id = $1), ${rollupCtes('seeded')} SELECT 1`,
    t.organizationId,
  );
  await step(
    'activity_daily rollups',
    `INSERT INTO activity_daily (organization_id, day, api_key_id, model, provider_name, workspace_id, user_id,
                                 requests, prompt_tokens, completion_tokens, reasoning_tokens, usage, byok_usage)
     SELECT organization_id, (created_at AT TIME ZONE 'UTC')::date, api_key_id, model, coalesce(provider_name, ''),
            min(workspace_id::text)::uuid, min(user_id), count(*), sum(tokens_prompt), sum(tokens_completion),
            sum(coalesce(native_tokens_reasoning, 0)), sum(usage), 0
     FROM generations WHERE api_key_id = $1::uuid GROUP BY 1, 2, 3, 4, 5`,
    t.benchKeyId,
  );
  await step(
    'api_keys.usage',
    `UPDATE api_keys SET usage = (SELECT coalesce(sum(usage), 0) FROM key_usage_daily WHERE api_key_id = $1::uuid), updated_at = now()
     WHERE id = $1::uuid`,
    t.benchKeyId,
  );
  await step(
    'organization credit',
    `UPDATE organizations SET total_usage = (SELECT coalesce(sum(usage), 0) FROM api_keys WHERE organization_id = $1),
        total_credits = 1000000, credit_balance = 1000000 - (SELECT coalesce(sum(usage), 0) FROM api_keys WHERE organization_id = $1),
        updated_at = now()
     WHERE id = $1`,
    t.organizationId,
  );
  // VACUUM and CHECKPOINT too: otherwise autovacuum starts on the freshly inserted tables (a
  // million generations at the large size), and the checkpointer writes out their pages, during the
  // first scenarios, and that CPU lands in their db cpu column (GET /key's database CPU per answer
  // was 2.9x the small size's in a run without either, 2.0x with VACUUM alone).
  await step('vacuum and analyze', 'VACUUM (ANALYZE)');
  await step('checkpoint', 'CHECKPOINT');
}
