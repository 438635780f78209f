// Observability destinations (platform-api.md part 3, D17-D21): a workspace's trace-broadcast
// targets, managed by the organization's management keys.
//
// - Config: validated per type (destinationConfigSchema: required keys, optional keys, headers,
//   nothing else; 400 naming the field). URL keys must pass storedUrlProblem (../../upstream):
//   absolute https, http only to a loopback host allowed in UPSTREAM_ALLOWED_HOSTS.
// - Secrets (DESTINATION_SECRET_KEYS and every header value) are sealed together with the secret box
//   (one JSON object, bound to the row id) and stored masked in `config`, which is what answers
//   show. A PATCH value equal to the stored masked form is ignored (the stored secret stays).
// - A webhook destination gets a Standard Webhooks signing secret at creation (whsec_ + base64 of 32
//   random bytes), sealed on its own (bound to `<id>:signing`), read and rotated over tRPC only.
// - At most 5 live destinations of one type per workspace: the workspace row is locked while the
//   count is read and the row written, so two creates racing for the 5th slot cannot both succeed.
// - Nothing here logs a config value.
// - Every write appends its audit entry in its own transaction (docs/audit.md): the record as answers
//   show it (secrets masked), never a signing secret. The entry is made from the actor and deps.
// - How secrets are sealed, opened and resealed: destinations-secrets.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { Prisma, type Db, type ObservabilityDestination as DestinationRow } from '@switchyard/db';
import {
  DELIVERED_DESTINATION_TYPES,
  DESTINATION_SECRET_KEYS,
  DESTINATION_URL_KEYS,
  destinationConfigSchema,
  isReservedDestinationHeader,
  type CreateDestinationInput,
  type Destination,
  type DestinationStatus,
  type DestinationType,
  type FilterRules,
  type ListDestinationsInput,
  type UpdateDestinationInput,
} from '@switchyard/schema';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { defaultWorkspaceId, findOwned, resolveWorkspaceOrForeign } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { Conflict, Invalid, NotFound } from '../../lib/errors.js';
import { jsonList, listOrNull } from '../../lib/json-list.js';
import type { AllowedHost } from '../../upstream/index.js';
import { storedUrlProblem } from '../../upstream/index.js';
import { patternProblem } from './filter-rules.js';
import { appendAudit, auditOfTenant, changedFields, created, removed } from '../audit/audit.js';
import { pageOf } from '../pages.js';
import { type Config, maskSecret, plaintextConfig, type SecretBundle, signingAd } from './destinations-secrets.js';

/** At most this many live destinations of one type in one workspace (platform-api.md 3.3). */
export const DESTINATIONS_PER_TYPE = 5;

/** Defaults stored (and answered) when a create leaves these optional keys out. */
const CONFIG_DEFAULTS: Partial<Record<DestinationType, Record<string, string>>> = {
  webhook: { method: 'POST' },
  s3: { prefix: 'switchyard-traces', pathTemplate: '{prefix}/{date}' },
  clickhouse: { table: 'switchyard_traces' },
  langsmith: { project: 'main' },
  newrelic: { region: 'us' },
  snowflake: { schema: 'PUBLIC' },
};

/** A new Standard Webhooks signing secret: whsec_ + base64 of 32 random bytes. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function destinationOf(row: DestinationRow): Destination {
  return {
    id: row.id,
    type: row.type as DestinationType,
    name: row.name,
    workspace_id: row.workspace_id,
    enabled: row.enabled,
    config: row.config as Record<string, string>,
    sampling_rate: row.sampling_rate,
    privacy_mode: row.privacy_mode,
    regions: row.regions,
    api_key_hashes: listOrNull(row.api_key_hashes),
    broadcast_generation_cost: row.broadcast_generation_cost,
    broadcast_generation_identity: row.broadcast_generation_identity,
    broadcast_generation_request_context: row.broadcast_generation_request_context,
    filter_rules: (row.filter_rules as FilterRules | null) ?? null,
    delivery: DELIVERED_DESTINATION_TYPES.includes(row.type as DestinationType) ? 'supported' : 'not_supported',
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } as Destination;
}

/** The config as `schema` reads it, or 400 naming each refused key (`config.<key>`), as input validation names fields. */
function parseConfig(schema: z.ZodType, config: unknown): Config {
  const result = z.object({ config: schema }).safeParse({ config });
  if (!result.success) {
    const issues = result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    throw new Invalid(`config refused: ${issues.map((i) => i.path).join(', ')}`, { issues });
  }
  return result.data.config as Config;
}

/**
 * 400 for a header the caller's `headers` may not set (hop-by-hop, framing, Host, or one the sender
 * writes itself), naming it. Only the headers a request gives are judged: a row written before the
 * rule keeps what it holds, and the senders drop it.
 */
function assertSendableHeaders(config: unknown): void {
  const headers = config && typeof config === 'object' ? (config as { headers?: unknown }).headers : undefined;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return;
  for (const name of Object.keys(headers)) {
    if (!isReservedDestinationHeader(name)) continue;
    const parameter = `config.headers.${name}`;
    throw new Invalid(`${parameter}: a header the sender owns`, {
      parameter,
      reason: `header ${name} may not be set: hop-by-hop and framing headers, Host, and the headers the sender writes itself (webhook-id, webhook-timestamp, webhook-signature, Content-Type, Content-Encoding, User-Agent) are the sender's`,
    });
  }
}

/** Validates a whole config of `type` (400 naming config.<key>) and its URLs (`allowedHosts`: UPSTREAM_ALLOWED_HOSTS, the loopback hosts an http URL may name). */
function validConfig(type: DestinationType, config: unknown, allowedHosts: readonly AllowedHost[]): Config {
  const parsed = parseConfig(destinationConfigSchema(type), config);
  for (const key of DESTINATION_URL_KEYS) {
    const value = parsed[key];
    if (typeof value !== 'string') continue;
    const problem = storedUrlProblem(value, allowedHosts);
    if (problem) throw new Invalid(`config.${key}: ${problem}`, { parameter: `config.${key}`, reason: problem });
  }
  return parsed;
}

/** The answered config (secrets masked) and the secrets to seal, of a validated plaintext config. */
function splitConfig(config: Config): { shown: Config; secrets: SecretBundle | null } {
  const shown: Config = {};
  const secrets: SecretBundle = {};
  for (const [key, value] of Object.entries(config)) {
    if (key === 'headers') continue;
    if (DESTINATION_SECRET_KEYS.includes(key) && typeof value === 'string') {
      secrets[key] = value;
      shown[key] = maskSecret(value);
    } else {
      shown[key] = value;
    }
  }
  if (config.headers) {
    secrets.headers = { ...config.headers };
    shown.headers = Object.fromEntries(Object.entries(config.headers).map(([name, value]) => [name, maskSecret(value)]));
  }
  return { shown, secrets: Object.keys(secrets).length > 0 ? secrets : null };
}

/** regex rules must compile under the engine delivery judges them with (a broken pattern would match nothing, silently). */
function assertFilterRules(rules: FilterRules | null | undefined): void {
  for (const [g, group] of (rules?.groups ?? []).entries()) {
    for (const [r, rule] of group.rules.entries()) {
      if (rule.operator !== 'regex' || typeof rule.value !== 'string') continue;
      const problem = patternProblem(rule.value);
      if (problem) {
        const parameter = `filter_rules.groups.${g}.rules.${r}.value`;
        throw new Invalid(`${parameter}: not a regular expression (RE2 syntax): ${problem}`, { parameter, reason: 'not a regular expression (RE2 syntax)' });
      }
    }
  }
}

/** Stored form of filter rules: the defaults clients assume written out (enabled true, logic and). */
function storedFilterRules(rules: FilterRules | null): Prisma.InputJsonValue | null {
  if (!rules) return null;
  return { enabled: rules.enabled ?? true, groups: rules.groups.map((g) => ({ logic: g.logic ?? 'and', rules: g.rules })) };
}

/** eu is stored as europe; duplicates dropped, order kept. */
function storedRegions(regions: string[]): string[] {
  return [...new Set(regions.map((region) => (region === 'eu' ? 'europe' : region)))];
}

/** api_key_hashes must name keys of the caller's organization: any other hash is a 400. */
async function assertOwnKeyHashes(db: Db, actor: Actor, hashes: string[] | null | undefined): Promise<void> {
  if (!hashes) return;
  const wanted = [...new Set(hashes)];
  const found = await db.apiKey.findMany({ where: { ...tenantWhere(actor), deleted_at: null, hash: { in: wanted } }, select: { hash: true } });
  const known = new Set(found.map((row) => row.hash));
  const unknown = wanted.filter((hash) => !known.has(hash));
  if (unknown.length > 0) {
    throw new Invalid("api_key_hashes names keys that are not the organization's", {
      parameter: 'api_key_hashes',
      reason: 'unknown or foreign key hashes',
      invalid_api_key_hashes: unknown,
    });
  }
}

/** The workspace a call names (403: another organization's; 404: none), or the organization's default. */
async function workspaceOf(db: Db, actor: Actor, ref: string | undefined) {
  return resolveWorkspaceOrForeign(db, actor, ref ?? (await defaultWorkspaceId(db, actor)));
}

/** The organization's live destination with this id; 404 otherwise (another organization's, deleted, not a UUID). */
async function findDestination(db: Db | Prisma.TransactionClient, actor: Actor, id: string): Promise<DestinationRow> {
  return findOwned(actor, 'destination', id, (where) => db.observabilityDestination.findFirst({ where: { ...where, deleted_at: null } }));
}

/** D17: a workspace's live destinations, oldest first. */
export async function listDestinations(deps: Uses<'db'>, actor: Actor, input: ListDestinationsInput) {
  const { db } = deps;
  const workspace = await workspaceOf(db, actor, input.workspace_id);
  const where = { ...tenantWhere(actor), workspace_id: workspace.id, deleted_at: null };
  return pageOf(
    input,
    (slice) => db.observabilityDestination.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], ...slice }),
    () => db.observabilityDestination.count({ where }),
    destinationOf,
  );
}

export async function getDestination(deps: Uses<'db'>, actor: Actor, input: { id: string }): Promise<Destination> {
  return destinationOf(await findDestination(deps.db, actor, input.id));
}

/** An entry's view of a destination: the record as answers show it (secrets masked), without its timestamps. */
function audited(destination: Destination): Record<string, unknown> {
  const { created_at: _c, updated_at: _u, ...fields } = destination;
  return fields;
}

/** D18: validates everything, then writes under the workspace's lock (the 5-per-type limit). */
export async function createDestination(deps: Uses<'db' | 'secrets' | 'media' | Audited>, actor: Actor, input: CreateDestinationInput): Promise<Destination> {
  const audit = auditOfTenant(actor, deps);
  const { db, secrets: box } = deps;
  assertSendableHeaders(input.config);
  const config = validConfig(input.type, { ...CONFIG_DEFAULTS[input.type], ...input.config }, deps.media.upstreamAllowedHosts);
  assertFilterRules(input.filter_rules);
  const workspace = await workspaceOf(db, actor, input.workspace_id);
  await assertOwnKeyHashes(db, actor, input.api_key_hashes);
  const id = randomUUID();
  const { shown, secrets } = splitConfig(config);
  const row = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM workspaces WHERE id = ${workspace.id}::uuid FOR UPDATE`;
    const live = await tx.observabilityDestination.count({ where: { ...tenantWhere(actor), workspace_id: workspace.id, type: input.type, deleted_at: null } });
    if (live >= DESTINATIONS_PER_TYPE) {
      throw new Conflict(`workspace ${workspace.id} already has ${live} ${input.type} destinations`, {
        reason: `at most ${DESTINATIONS_PER_TYPE} destinations of one type per workspace`,
        type: input.type,
      });
    }
    const row = await tx.observabilityDestination.create({
      data: {
        id,
        ...tenantData(actor),
        workspace_id: workspace.id,
        type: input.type,
        name: input.name,
        enabled: input.enabled ?? true,
        config: shown as Prisma.InputJsonValue,
        secrets_ciphertext: secrets ? box.seal(JSON.stringify(secrets), id) : null,
        signing_secret_ciphertext: input.type === 'webhook' ? box.seal(newSigningSecret(), signingAd(id)) : null,
        sampling_rate: input.sampling_rate ?? 1,
        privacy_mode: input.privacy_mode ?? false,
        regions: storedRegions(input.regions ?? ['global']),
        api_key_hashes: jsonList(input.api_key_hashes ?? null),
        broadcast_generation_cost: input.broadcast_generation_cost ?? false,
        broadcast_generation_identity: input.broadcast_generation_identity ?? false,
        broadcast_generation_request_context: input.broadcast_generation_request_context ?? false,
        filter_rules: storedFilterRules(input.filter_rules ?? null) ?? Prisma.DbNull,
      },
    });
    await appendAudit(tx, audit, { action: 'destinations.create', targetType: 'destination', targetId: row.id, changes: created(audited(destinationOf(row))) });
    return row;
  });
  return destinationOf(row);
}

/**
 * The config a PATCH leaves: the stored plaintext with the keys given replacing theirs, except a
 * secret equal to the stored masked form (kept); `headers`, when given, replaces the map, a header
 * value equal to the stored masked form keeping the stored value.
 */
function patchedConfig(stored: Config, shownStored: Config, patch: Record<string, unknown>): Config {
  const next: Config = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'headers' && value && typeof value === 'object' && !Array.isArray(value)) {
      const storedHeaders = stored.headers ?? {};
      const shownHeaders = shownStored.headers ?? {};
      next.headers = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, v]) => [
          name,
          v === shownHeaders[name] && name in storedHeaders ? storedHeaders[name]! : v,
        ]),
      ) as Record<string, string>;
      continue;
    }
    if (DESTINATION_SECRET_KEYS.includes(key) && value === shownStored[key] && key in stored) continue;
    next[key] = value;
  }
  return next;
}

/** D20: only the fields given change; the row is locked so that concurrent PATCHes of secrets do not lose one. */
export async function updateDestination(deps: Uses<'db' | 'secrets' | 'media' | Audited>, actor: Actor, input: UpdateDestinationInput): Promise<Destination> {
  const audit = auditOfTenant(actor, deps);
  const { db, secrets: box } = deps;
  const { id: ref, config: configPatch, regions, api_key_hashes, filter_rules, ...flags } = input;
  assertFilterRules(filter_rules);
  const existing = await findDestination(db, actor, ref);
  await assertOwnKeyHashes(db, actor, api_key_hashes);
  const row = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM observability_destinations WHERE id = ${existing.id}::uuid FOR UPDATE`;
    const current = await findDestination(tx, actor, ref);
    let configData: { config: Prisma.InputJsonValue; secrets_ciphertext: string | null } | undefined;
    if (configPatch !== undefined) {
      const type = current.type as DestinationType;
      // The keys given, on their own, first: errors name what the caller sent.
      parseConfig(destinationConfigSchema(type).partial(), configPatch);
      assertSendableHeaders(configPatch);
      const merged = validConfig(type, patchedConfig(plaintextConfig(box, current), current.config as Config, configPatch), deps.media.upstreamAllowedHosts);
      const { shown, secrets } = splitConfig(merged);
      configData = { config: shown as Prisma.InputJsonValue, secrets_ciphertext: secrets ? box.seal(JSON.stringify(secrets), current.id) : null };
    }
    const [updated] = await tx.observabilityDestination.updateManyAndReturn({
      where: { id: current.id, deleted_at: null },
      data: {
        ...flags,
        // Turned on again by a caller: delivery's failure streak (and its reason for turning it off) starts over.
        ...(flags.enabled === true ? { failing_since: null, disabled_reason: null } : {}),
        ...configData,
        ...(regions === undefined ? {} : { regions: storedRegions(regions) }),
        api_key_hashes: jsonList(api_key_hashes),
        ...(filter_rules === undefined ? {} : { filter_rules: storedFilterRules(filter_rules) ?? Prisma.DbNull }),
      },
    });
    if (!updated) throw new NotFound(`destination ${ref}`);
    // The fields given, as answers show them (config masked); a secret replaced under the same mask
    // shows as secrets_changed.
    const fields = Object.keys(input).filter((field) => field !== 'id');
    const changes = changedFields(audited(destinationOf(current)), audited(destinationOf(updated)), fields);
    if (configData && configData.secrets_ciphertext !== current.secrets_ciphertext && !('config' in (changes.after ?? {}))) {
      changes.after = { ...changes.after, secrets_changed: true };
    }
    await appendAudit(tx, audit, { action: 'destinations.update', targetType: 'destination', targetId: updated.id, changes });
    return updated;
  });
  return destinationOf(row);
}

/** D21: soft delete; the sealed secrets are destroyed with it (deleted at the audit entry's time). */
export async function deleteDestination(deps: Uses<'db' | Audited>, actor: Actor, input: { id: string }): Promise<{ deleted: true }> {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const { db } = deps;
  const existing = await findDestination(db, actor, input.id);
  await db.$transaction(async (tx) => {
    const { count } = await tx.observabilityDestination.updateMany({
      where: { id: existing.id, deleted_at: null },
      data: { deleted_at: now, enabled: false, secrets_ciphertext: null, signing_secret_ciphertext: null },
    });
    if (count === 0) throw new NotFound(`destination ${input.id}`);
    await appendAudit(tx, audit, {
      action: 'destinations.delete',
      targetType: 'destination',
      targetId: existing.id,
      changes: removed({ type: existing.type, name: existing.name, workspace_id: existing.workspace_id }),
    });
  });
  return { deleted: true };
}

async function webhookOf(db: Db, actor: Actor, id: string): Promise<DestinationRow> {
  const row = await findDestination(db, actor, id);
  if (row.type !== 'webhook' || !row.signing_secret_ciphertext) {
    throw new Invalid(`destination ${id} is a ${row.type} destination: only webhook destinations have a signing secret`, {
      parameter: 'id',
      reason: 'only webhook destinations have a signing secret',
    });
  }
  return row;
}

/** destinations.secret (tRPC): a webhook destination's signing secret. */
export async function destinationSecret(deps: Uses<'db' | 'secrets'>, actor: Actor, input: { id: string }): Promise<{ secret: string }> {
  const row = await webhookOf(deps.db, actor, input.id);
  return { secret: deps.secrets.open(row.signing_secret_ciphertext!, signingAd(row.id)) };
}

/** destinations.rotateSecret (tRPC): a new signing secret replaces the old one at once. */
export async function rotateDestinationSecret(deps: Uses<'db' | 'secrets' | Audited>, actor: Actor, input: { id: string }): Promise<{ secret: string }> {
  const audit = auditOfTenant(actor, deps);
  const row = await webhookOf(deps.db, actor, input.id);
  const secret = newSigningSecret();
  await deps.db.$transaction(async (tx) => {
    const { count } = await tx.observabilityDestination.updateMany({
      where: { id: row.id, deleted_at: null },
      data: { signing_secret_ciphertext: deps.secrets.seal(secret, signingAd(row.id)) },
    });
    if (count === 0) throw new NotFound(`destination ${input.id}`);
    // That it changed, never the secret (not even masked: answers show it whole or not at all).
    await appendAudit(tx, audit, {
      action: 'destinations.rotateSecret',
      targetType: 'destination',
      targetId: row.id,
      changes: { after: { signing_secret: 'rotated' } },
    });
  });
  return { secret };
}

const EMPTY_COUNTS = { pending: 0, failing: 0, delivered: 0, dead: 0 };

/** destinations.status (tRPC): how delivery to one of the organization's destinations is going. */
export async function destinationStatus(deps: Uses<'db'>, actor: Actor, input: { id: string }): Promise<DestinationStatus> {
  const { db } = deps;
  const row = await findOwned(actor, 'destination', input.id, (where) => db.observabilityDestination.findFirst({ where: { ...where, deleted_at: null } }));
  const [groups, lastError, lastDelivered] = await Promise.all([
    db.eventDelivery.groupBy({ by: ['status'], where: { destination_id: row.id }, _count: { _all: true } }),
    db.eventDelivery.findFirst({
      where: { destination_id: row.id, last_error: { not: null } },
      orderBy: { last_attempt_at: 'desc' },
      select: { last_error: true, last_attempt_at: true },
    }),
    db.eventDelivery.aggregate({ where: { destination_id: row.id, status: 'delivered' }, _max: { delivered_at: true } }),
  ]);
  const counts = { ...EMPTY_COUNTS };
  for (const group of groups) if (group.status in counts) counts[group.status as keyof typeof counts] = group._count._all;
  return {
    destination_id: row.id,
    enabled: row.enabled,
    delivery: DELIVERED_DESTINATION_TYPES.includes(row.type as DestinationType) ? 'supported' : 'not_supported',
    disabled_reason: row.disabled_reason,
    ...counts,
    last_error: lastError?.last_error ?? null,
    last_error_at: lastError?.last_attempt_at?.toISOString() ?? null,
    last_delivered_at: lastDelivered._max.delivered_at?.toISOString() ?? null,
    failing_since: row.failing_since?.toISOString() ?? null,
  };
}
