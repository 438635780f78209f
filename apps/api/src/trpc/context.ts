import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Actor, PlatformActor } from '../access/callers.js';
import type { AccessRule, OperationScope } from '../access/rules.js';
import { credentialOf } from '../access/credentials.js';
import { sessionTokenOf } from '../access/sessions.js';
import type { AppDeps, ServiceDeps } from './service-deps.js';
import { loggerOf, requestIdOf } from '../lib/request-scope.js';

/**
 * What a service names its dependencies by (decision 0037): a procedure's context holds its
 * request's ServiceDeps (ctx.deps), so the modules take these types from here, beside the context.
 */
export type { ServiceDeps, Uses } from './service-deps.js';

/** A request's context: the services' dependencies as its request gives them, and its credential. */
export interface Context {
  /** What its services are given: the app's dependencies with the request's id, client address and logger (requestDepsFactory). */
  deps: ServiceDeps;
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
 * Makes each request's ServiceDeps: the app's dependencies, read through the prototype of one class
 * per app (nothing is copied), with what is the request's own: its id and client address (a write's
 * audit entry names them: docs/audit.md), whether its client is gone, and a logger that names the
 * request. Every request's deps have the same shape. An object literal spreading the dependencies
 * and then defining the logger getter over them, as before decision 0015, was built property by
 * property into a dictionary-mode object, a visible share of GET /key's server CPU, and every
 * `deps.x` read after it a dictionary lookup.
 */
export function requestDepsFactory(deps: AppDeps): (req: IncomingMessage) => ServiceDeps {
  const { logger, ...shared } = deps;
  class RequestDeps {
    // Functions of their own (not methods): services pass them on as they are.
    readonly requestId: () => string | null;
    readonly clientAddress: () => string | null;
    readonly clientGone: () => boolean;
    readonly #req: IncomingMessage;

    constructor(req: IncomingMessage) {
      this.requestId = () => requestIdOf(req) ?? null;
      this.clientAddress = () => (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? null;
      this.clientGone = () => req.socket.destroyed;
      this.#req = req;
    }

    /** What a service logs carries the request's id (the child logger is made when first used). */
    get logger(): Logger {
      return loggerOf(this.#req, logger);
    }
  }
  // The request's own values are the instance's, and win over any dependency of the same name.
  Object.assign(RequestDeps.prototype, shared);
  return (req) => new RequestDeps(req) as RequestDeps & AppDeps;
}

/**
 * `sessions`: whether a session cookie is read (docs/sessions.md): yes on /trpc (the default), not
 * on the REST face, which opts out. A bearer token, when sent, is the credential either way. A
 * context holds few fields of its own: a middleware's next({ ctx }) copies them for each call.
 */
export function contextFactory(deps: AppDeps, options: { sessions: boolean } = { sessions: true }) {
  const depsOf = requestDepsFactory(deps);
  return ({ req, res }: { req: IncomingMessage; res: { locals?: Record<string, unknown> } }): Context => {
    const credential = credentialOf(req);
    // The request log names the key by its hash, never by the key.
    if (res.locals) res.locals.keyHash = credential.keyHash;
    return {
      deps: depsOf(req),
      keyHash: credential.keyHash,
      accessToken: credential.accessToken,
      sessionToken: options.sessions && credential.keyHash === null ? sessionTokenOf(req) : null,
      sessionCaller: undefined,
      headers: req.headers,
      origin: () => requestOrigin(req),
      admission: undefined,
    };
  };
}
