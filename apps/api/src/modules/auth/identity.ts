// Workload identity's parts, built once per server: Switchyard's signing keys, the access tokens they
// sign, and the issuers' keys the token exchange checks subject tokens against.
import type { Db } from '@switchyard/db';
import type { SecretBox } from '../../lib/secret-box.js';
import type { MediaDeps } from '../../storage/media.js';
import { AccessTokens } from './access-tokens.js';
import { SigningKeys } from './signing-keys.js';
import { IssuerKeys } from './token-exchange.js';

export interface WorkloadIdentity {
  signingKeys: SigningKeys;
  tokens: AccessTokens;
  issuers: IssuerKeys;
}

export interface WorkloadIdentityOptions {
  db: Db;
  secrets: SecretBox;
  now: () => Date;
  media: MediaDeps;
  /** How long a signing key signs (SIGNING_KEY_ROTATION_DAYS). */
  rotationMs: number;
  cacheTtlMs: number;
}

export function workloadIdentity(options: WorkloadIdentityOptions): WorkloadIdentity {
  const signingKeys = new SigningKeys(options);
  return { signingKeys, tokens: new AccessTokens(signingKeys), issuers: new IssuerKeys(options.media) };
}
