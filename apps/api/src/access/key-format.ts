// API key format (compat.md, "Key formats"): sk-sy-v1- + 64 lowercase hex characters (256 random
// bits). Only the SHA-256 hex of the whole key is stored; it is also the key's public identifier.
// Platform keys (no organization) look alike with their own prefix, so that a leaked one is told
// apart at a glance and by secret scanners.
import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sk-sy-v1-';
export const API_KEY_PATTERN = /^sk-sy-v1-[0-9a-f]{64}$/;

export const PLATFORM_KEY_PREFIX = 'sk-sy-platform-v1-';
export const PLATFORM_KEY_PATTERN = /^sk-sy-platform-v1-[0-9a-f]{64}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('hex');
}

export function generatePlatformKey(): string {
  return PLATFORM_KEY_PREFIX + randomBytes(32).toString('hex');
}

export function hashApiKey(secret: string): string {
  // Node's one-shot hash, less than half createHash's cost, on every authenticated request.
  return hash('sha256', secret, 'hex');
}

/** `sk-sy-v1-a1b...f90`: the prefix, the first 3 and the last 3 characters of the secret part. */
export function maskApiKey(secret: string): string {
  const prefix = secret.startsWith(PLATFORM_KEY_PREFIX) ? PLATFORM_KEY_PREFIX : API_KEY_PREFIX;
  const body = secret.startsWith(prefix) ? secret.slice(prefix.length) : secret;
  return `${prefix}${body.slice(0, 3)}...${body.slice(-3)}`;
}

/** Whether a bearer is shaped as a JWT (three base64url parts, a JSON header), not a key's secret. */
export function looksLikeJwt(bearer: string): boolean {
  return bearer.startsWith('eyJ') && bearer.split('.').length === 3;
}
