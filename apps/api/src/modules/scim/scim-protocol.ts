// The SCIM 2.0 protocol pieces (RFC 7643, RFC 7644) taken from SCIMMY through its public API: the
// resource schemas (input checks and coercion), the filter parser, the PatchOp engine, the error
// and list messages and the discovery documents. What SCIMMY leaves to the service provider (where
// resources are stored, what providers really send) is here and in directory.service.ts.
import SCIMMY from 'scimmy';

export const SCIM_CONTENT_TYPE = 'application/scim+json';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const USER_SCHEMA = SCIMMY.Schemas.User.id;
export const GROUP_SCHEMA = SCIMMY.Schemas.Group.id;
const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** A SCIM error answer (RFC 7644 §3.12): status, optional scimType, detail. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: string | undefined,
    detail: string,
  ) {
    super(detail);
    this.name = 'ScimError';
  }
}

export function scimErrorBody(status: number, detail: string, scimType?: string) {
  return { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

/**
 * A ScimError, or SCIMMY's own error, as a ScimError. With `reading`, also the TypeError or
 * SyntaxError that SCIMMY throws for a bad value while it reads a request (nowhere else: there, such
 * an error is a defect, a 500).
 */
export function scimErrorOf(error: unknown, reading = false): ScimError | null {
  if (error instanceof ScimError) return error;
  if (error instanceof SCIMMY.Types.Error) return new ScimError(error.status, error.scimType, error.message);
  if (reading && (error instanceof TypeError || error instanceof SyntaxError)) return new ScimError(400, 'invalidValue', error.message);
  return null;
}

// The discovery documents: what this provider supports, in SCIMMY's rendering of RFC 7643 §5-7.
SCIMMY.Resources.declare(SCIMMY.Resources.User, {}).declare(SCIMMY.Resources.Group, {});
SCIMMY.Config.set({
  patch: true,
  filter: { supported: true, maxResults: 100 },
  bulk: false,
  changePassword: false,
  sort: false,
  etag: false,
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'Bearer token',
      description: 'A SCIM token of the organization (switchyard scim tokens create), sent as Authorization: Bearer <token>.',
      primary: true,
    },
  ],
});

export async function serviceProviderConfig() {
  return new SCIMMY.Resources.ServiceProviderConfig().read();
}

export async function resourceTypes(id?: string) {
  return new SCIMMY.Resources.ResourceType(id).read();
}

export async function schemas(id?: string) {
  return new SCIMMY.Resources.Schema(id).read();
}

export function listResponse(resources: unknown[], totalResults: number, startIndex: number) {
  return {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

// ---- What providers really send ----

const BOOLEAN_ATTRIBUTES = new Set(['active', 'primary']);

/** "True" / "False" (any case) as booleans, for the boolean attributes (Entra sends them as strings). */
function booleanOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const lower = value.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : value;
}

/** A resource body with its boolean attributes (top level, and inside multi-valued ones) as booleans. */
function withBooleans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withBooleans);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, v]) => [name, BOOLEAN_ATTRIBUTES.has(name) ? booleanOf(v) : withBooleans(v)]),
  );
}

/** The body without the enterprise extension (this service stores nothing of it). */
function withoutEnterprise(body: Record<string, unknown>): Record<string, unknown> {
  const { [ENTERPRISE_USER]: _extension, ...rest } = body;
  if (Array.isArray(rest.schemas)) rest.schemas = rest.schemas.filter((schema) => schema !== ENTERPRISE_USER);
  return rest;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ScimError(400, 'invalidSyntax', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A User or Group body checked and coerced by SCIMMY's schema (required attributes, types), booleans as sent by Entra accepted. */
export function parseResource(kind: 'User' | 'Group', body: unknown): Record<string, unknown> {
  const input = withBooleans(withoutEnterprise(objectBody(body))) as Record<string, unknown>;
  const schema = kind === 'User' ? SCIMMY.Schemas.User : SCIMMY.Schemas.Group;
  try {
    return JSON.parse(JSON.stringify(new schema(input, 'in'))) as Record<string, unknown>;
  } catch (error) {
    throw scimErrorOf(error, true) ?? error;
  }
}

/** A PatchOp's operations with provider quirks smoothed: op names in any case, string booleans, the enterprise extension dropped. */
function normalizedPatch(body: unknown): Record<string, unknown> {
  const message = objectBody(body);
  const operations = Array.isArray(message.Operations) ? message.Operations : message.operations;
  if (!Array.isArray(operations)) throw new ScimError(400, 'invalidSyntax', 'PatchOp request body must contain an Operations array');
  const kept = operations.flatMap((operation: unknown): Record<string, unknown>[] => {
    const op = objectBody(operation);
    const path = typeof op.path === 'string' ? op.path : undefined;
    if (path?.startsWith(ENTERPRISE_USER)) return [];
    let value = op.value;
    const leaf = path?.split('.').pop()?.replace(/\[.*$/, '');
    if (leaf && BOOLEAN_ATTRIBUTES.has(leaf)) value = booleanOf(value);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value)) value = withBooleans(withoutEnterprise(value as Record<string, unknown>));
    else value = withBooleans(value);
    const name = typeof op.op === 'string' ? op.op.toLowerCase() : op.op;
    // Entra removes members as { op: Remove, path: members, value: [{ value: id }] }: the RFC's form
    // is a filter in the path, one removal per member.
    if (name === 'remove' && path && /^\w+$/.test(path) && Array.isArray(value) && value.length > 0) {
      return value.map((item) => {
        const id = (item as { value?: unknown } | null)?.value;
        if (typeof id !== 'string') throw new ScimError(400, 'invalidValue', `every value removed from ${path} needs a value`);
        return { op: 'remove', path: `${path}[value eq ${JSON.stringify(id)}]` };
      });
    }
    return [{ ...op, op: name, ...(value === undefined ? {} : { value }) }];
  });
  return { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: kept };
}

/**
 * Applies a PatchOp request to a resource's current representation with SCIMMY's PatchOp engine
 * (paths with and without filters, value as object or array, add / replace / remove), and answers
 * the resulting representation. An operation naming the resource's own id with its own value
 * (Okta sends it) changes nothing and is accepted.
 */
export async function applyPatch(kind: 'User' | 'Group', current: Record<string, unknown>, body: unknown): Promise<Record<string, unknown>> {
  const message = normalizedPatch(body);
  const operations = message.Operations as Record<string, unknown>[];
  for (const op of operations) {
    if (op.value !== null && typeof op.value === 'object' && !Array.isArray(op.value) && op.path === undefined) {
      const value = op.value as Record<string, unknown>;
      if (value.id !== undefined && value.id === current.id) delete value.id;
    }
  }
  if (operations.length === 0) return current;
  const schema = kind === 'User' ? SCIMMY.Schemas.User : SCIMMY.Schemas.Group;
  try {
    const instance = new schema(current, 'out');
    const patch = new SCIMMY.Messages.PatchOp(message as ConstructorParameters<typeof SCIMMY.Messages.PatchOp>[0]);
    const result = await patch.apply(instance);
    return JSON.parse(JSON.stringify(result ?? instance)) as Record<string, unknown>;
  } catch (error) {
    throw scimErrorOf(error, true) ?? error;
  }
}

// ---- Filters ----

/** One comparison of a parsed filter: attribute, operator, value. */
export interface Comparison {
  attribute: string;
  op: string;
  value: unknown;
}

/**
 * A filter (RFC 7644 §3.4.2.2) parsed by SCIMMY, as branches (OR) of comparisons (AND). This
 * provider evaluates comparisons of top-level attributes; a nested or grouped expression is 400
 * invalidFilter.
 */
export function parseFilter(filter: string): Comparison[][] {
  let parsed: unknown;
  try {
    parsed = new SCIMMY.Types.Filter(filter);
  } catch (error) {
    const scim = scimErrorOf(error, true);
    throw new ScimError(400, 'invalidFilter', scim?.message ?? 'the filter cannot be parsed');
  }
  const branches: Comparison[][] = [];
  for (const branch of parsed as Record<string, unknown>[]) {
    const comparisons: Comparison[] = [];
    for (const [attribute, expression] of Object.entries(branch)) {
      if (!Array.isArray(expression) || typeof expression[0] !== 'string') {
        throw new ScimError(400, 'invalidFilter', `the filter on ${attribute} is not supported (only comparisons of top-level attributes)`);
      }
      const op = expression[0].toLowerCase();
      if (op !== 'pr' && expression.length < 2) throw new ScimError(400, 'invalidFilter', `the comparison of ${attribute} has no value`);
      comparisons.push({ attribute, op, value: expression[1] });
    }
    branches.push(comparisons);
  }
  return branches;
}

/** Whether `actual` satisfies one comparison; strings compare case-insensitively unless caseExact. */
export function compare(actual: unknown, op: string, expected: unknown, caseExact: boolean): boolean {
  if (op === 'pr') return actual !== undefined && actual !== null && actual !== '';
  if (actual === undefined || actual === null) return op === 'ne';
  const fold = (v: unknown) => (typeof v === 'string' && !caseExact ? v.toLowerCase() : v);
  const a = fold(actual);
  const e = fold(expected);
  switch (op) {
    case 'eq':
      return a === e;
    case 'ne':
      return a !== e;
    case 'co':
      return typeof a === 'string' && typeof e === 'string' && a.includes(e);
    case 'sw':
      return typeof a === 'string' && typeof e === 'string' && a.startsWith(e);
    case 'ew':
      return typeof a === 'string' && typeof e === 'string' && a.endsWith(e);
    case 'gt':
      return (a as string) > (e as string);
    case 'ge':
      return (a as string) >= (e as string);
    case 'lt':
      return (a as string) < (e as string);
    case 'le':
      return (a as string) <= (e as string);
    default:
      throw new ScimError(400, 'invalidFilter', `operator ${op} is not supported`);
  }
}
