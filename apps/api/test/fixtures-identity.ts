// A local identity provider for the token exchange (D12): an ES256 key pair made here, its public
// key as a JWK set (inline in a policy, or served over HTTP on loopback), and subject tokens it signs.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { GRANT_TYPE, JWT_TOKEN_TYPE } from '../src/modules/auth/token-exchange.js';
import type { TestServer } from '../src/testing/test-server.js';
import { ok } from './fixtures-trpc.js';

export const ISSUER = 'https://idp.example.test';
export const AUDIENCE = 'switchyard-test';

export interface IdentityProvider {
  jwks: { keys: JWK[] };
  /** A subject token: `sub` given, signed with the provider's key; claims may be overridden. */
  sign(subject: string, claims?: { iss?: string; aud?: string; exp?: number; nbf?: number; iat?: number }, key?: CryptoKey): Promise<string>;
}

export async function identityProvider(kid = 'idp-key-1'): Promise<IdentityProvider> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return {
    jwks: { keys: [jwk] },
    async sign(subject, claims = {}, key = privateKey) {
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(claims.iss ?? ISSUER)
        .setAudience(claims.aud ?? AUDIENCE)
        .setSubject(subject)
        .setIssuedAt(claims.iat ?? now)
        .setExpirationTime(claims.exp ?? now + 3600);
      if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
      return jwt.sign(key);
    },
  };
}

/** The provider's JWK set served at http://127.0.0.1:<port>/jwks, counting fetches. */
export async function serveJwks(provider: IdentityProvider): Promise<{ url: string; host: string; fetches: () => number; close(): Promise<void> }> {
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    fetches++;
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(provider.jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    host: `127.0.0.1:${port}`,
    fetches: () => fetches,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A token exchange's form. */
export function exchangeForm(policyId: string, subjectToken: string, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    grant_type: GRANT_TYPE,
    subject_token: subjectToken,
    subject_token_type: JWT_TOKEN_TYPE,
    federation_policy_id: policyId,
    ...extra,
  }).toString();
}

/** POST /api/v1/oauth/token with a form body. */
export function exchange(server: TestServer, form: string, headers: Record<string, string> = {}): Promise<Response> {
  return server.request('/api/v1/oauth/token', {
    method: 'POST',
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

/**
 * An access token acting as the key `keyHash`: a policy of the key's organization (made by
 * `managementKey`, the server's own unless given) trusting `provider` for a subject of its own, and
 * its exchange.
 */
export async function accessToken(server: TestServer, provider: IdentityProvider, keyHash: string, managementKey?: string): Promise<string> {
  const subject = `workload-${randomUUID().slice(0, 8)}`;
  const policy = await ok(
    server,
    'federationPolicies.create',
    { issuer: ISSUER, audience: AUDIENCE, subject, jwks: provider.jwks as { keys: [{ kty: 'EC' }] }, key_hash: keyHash },
    managementKey ? { key: managementKey } : {},
  );
  const res = await exchange(server, exchangeForm(policy.id, await provider.sign(subject)));
  if (res.status !== 200) throw new Error(`the token exchange answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
