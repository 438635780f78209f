import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Actor, PlatformActor } from '../access/callers.js';
import type { AccessRule, OperationScope } from '../access/rules.js';
import { credentialOf, type Credential } from '../access/credentials.js';
import { sessionTokenOf } from '../access/sessions.js';
import type { AppDeps, ServiceDeps } from './service-deps.js';
import { loggerOf, requestIdOf } from '../lib/request-scope.js';

/**
 * What a service names its dependencies by (decision 0037): a procedure's context is a ServiceDeps,
 * so the modules take these types from here, beside the context they are given.
 */
export type { ServiceDeps, Uses } from './service-deps.js';

/** A request's context: its service dependencies (the request's id and client address among them) and its credential. */
export interface Context extends ServiceDeps {
  /** SHA-256 of the bearer token, or null when the request carries none. */
  keyHash: string | null;
  /** The bearer token when it is shaped as an access token (a JWT), to be verified; null otherwise. */
  accessToken: string | null;
  /** The session cookie's token, where sessions are accepted (/trpc) and no bearer token was sent; null otherwise. */
  sessionToken: string | null;
  /** The session's caller, looked up once for the calls of the request (trpc/init.ts). */
  sessionCaller: Promise<Actor> | undefined;
  /** The request's headers (e.g. promote picks its response shape from them). */
  headers: IncomingHttpHeaders;
  /** The origin the client reached (scheme://host[:port]), for absolute links: see requestOrigin(). */
  origin(): string;
  /** The caller admitted ahead of the call by the REST face (trpc/init.ts admitAhead), by which rule and scope, until its procedure takes it. */
  admission: AdmissionAhead | undefined;
}

/** An admitted caller: a tenant's actor, or the platform. */
export type Admission = { actor: Actor } | { platform: PlatformActor };

/** An admission made ahead of its procedure's call, with the rule and scope it was made by. */
export interface AdmissionAhead {
  access: AccessRule;
  scope: OperationScope | undefined;
  admitted: Promise<Admission>;
}

/** A host as a link may carry it: a DNS name, an IPv4 address or a bracketed IPv6 one, and a port. */
const SANE_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/i;

/**
 * The origin the client used to reach us (scheme://host[:port]), for absolute URLs in answers such
 * as pagination links. express's req.protocol and req.host read X-Forwarded-Proto and
 * X-Forwarded-Host only from a peer that "trust proxy" (TRUST_PROXY) trusts, and the Host header
 * otherwise. Whatever they give is used only when it is a sane host (and http or https); otherwise
 * the link names the address and port the client connected to: never unchecked client input.
 */
export function requestOrigin(req: IncomingMessage): string {
  const { protocol, host } = req as IncomingMessage & { protocol?: string; host?: string };
  const scheme = protocol === 'https' ? 'https' : 'http';
  if (host && host.length <= 260 && SANE_HOST.test(host)) return `${scheme}://${host}`;
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  return `${scheme}://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

/**
 * A raw route's service dependencies (the byte routes, /scim/v2): the app's, read through the
 * prototype (nothing is copied), with what a procedure's context adds of its request: its id and
 * client address (a write's audit entry names them: docs/audit.md), and whether its client is gone.
 */
export function serviceDepsOf(deps: AppDeps, req: IncomingMessage): ServiceDeps {
  return Object.assign(Object.create(deps) as AppDeps, {
    requestId: () => requestIdOf(req) ?? null,
    clientAddress: () => (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? null,
    clientGone: () => req.socket.destroyed,
  });
}

/**
 * What a request's context adds to the app's dependencies. Each context is an instance of one class
 * per app, whose prototype holds the app's dependencies (contextFactory), so every context has the
 * same shape, holds only what is its request's own, and reads `ctx.db` through its prototype. An
 * object literal spreading the dependencies and then defining the `logger` getter over them, as
 * before decision 0015, was built property by property into a dictionary-mode object, a visible share of
 * GET /key's server CPU, and every `ctx.x` read after it a dictionary lookup.
 */
class RequestScope {
  readonly keyHash: string | null;
  readonly accessToken: string | null;
  readonly sessionToken: string | null;
  readonly headers: IncomingHttpHeaders;
  readonly origin: () => string;
  readonly clientGone: () => boolean;
  readonly requestId: () => string | null;
  readonly clientAddress: () => string | null;
  admission: AdmissionAhead | undefined = undefined;
  sessionCaller: Promise<Actor> | undefined = undefined;
  readonly #req: IncomingMessage;
  readonly #logger: Logger;

  constructor(req: IncomingMessage, credential: Credential, sessionToken: string | null, logger: Logger) {
    this.keyHash = credential.keyHash;
    this.accessToken = credential.accessToken;
    this.sessionToken = sessionToken;
    this.headers = req.headers;
    this.origin = () => requestOrigin(req);
    // A function of its own (not a method): procedures pass it on as it is.
    this.clientGone = () => req.socket.destroyed;
    this.requestId = () => requestIdOf(req) ?? null;
    this.clientAddress = () => (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? null;
    this.#req = req;
    this.#logger = logger;
  }

  /**
   * What a procedure logs carries the request's id (the child logger is made when first used). A
   * getter of the class: a copy of the context made by spreading it (`{ ...ctx }`) has no logger.
   */
  get logger(): Logger {
    return loggerOf(this.#req, this.#logger);
  }
}

/**
 * `sessions`: whether a session cookie is read (docs/sessions.md): yes on /trpc (the default), not
 * on the REST face, which opts out. A bearer token, when sent, is the credential either way.
 */
export function contextFactory(deps: AppDeps, options: { sessions: boolean } = { sessions: true }) {
  // The logger is the scope's getter; the rest are set once on the prototype of this app's contexts
  // (the app's dependencies do not change after start), instead of copied onto every context: the
  // request's own values are the instance's, and win over any dependency of the same name.
  const { logger, ...shared } = deps;
  class AppScope extends RequestScope {}
  Object.assign(AppScope.prototype, shared);
  return ({ req, res }: { req: IncomingMessage; res: { locals?: Record<string, unknown> } }): Context => {
    const credential = credentialOf(req);
    // The request log names the key by its hash, never by the key.
    if (res.locals) res.locals.keyHash = credential.keyHash;
    const sessionToken = options.sessions && credential.keyHash === null ? sessionTokenOf(req) : null;
    return new AppScope(req, credential, sessionToken, logger) as RequestScope & AppDeps;
  };
}
