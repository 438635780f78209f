// A workspace's default guardrail: its id is derived from the workspace's (admin-api.md, Workspace),
// so that it can be named (PATCH /guardrails/{id} creates it, A16) before it is ever written.
import { v5 as uuidv5 } from 'uuid';

/** Fixed namespace of default guardrail ids: uuidv5(workspace id, this) names a workspace's default guardrail. */
const DEFAULT_GUARDRAIL_NAMESPACE = '6f1d3c2e-8a4b-5c7d-9e0f-1a2b3c4d5e6f';

/** The id of a workspace's default guardrail, derived from the workspace id (admin-api.md, Workspace). */
export function defaultGuardrailId(workspaceId: string): string {
  return uuidv5(workspaceId, DEFAULT_GUARDRAIL_NAMESPACE);
}
