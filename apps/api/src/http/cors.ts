// CORS for browser-based consoles (the `cors` package), only for the origins in CORS_ORIGINS:
// preflights (OPTIONS with Access-Control-Request-Method) are answered 204 with the allowed
// methods and the requested headers; answers expose the headers a console reads.
import cors from 'cors';
import type { RequestHandler } from 'express';
import { REQUEST_ID_HEADER } from './request-log.js';

export function corsFor(origins: string[]): RequestHandler {
  return cors({
    // A request from another origin gets no CORS headers at all, so the browser refuses it.
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Keys travel in Authorization, never in cookies.
    credentials: false,
    exposedHeaders: [REQUEST_ID_HEADER, 'Content-Disposition', 'Content-Length', 'Content-Range', 'Accept-Ranges'],
    maxAge: 600,
  });
}
