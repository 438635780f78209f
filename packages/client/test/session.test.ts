// The client with a session instead of a key (what the console uses in a browser), against the real
// server: signed in through POST /session/sign-in, its queries and mutations carry the cookie (here
// added by a fetch that plays the browser's part) and its mutations the CSRF token; without the
// token a mutation is refused, and a key client is unchanged.
import { CSRF_HEADER as SCHEMA_CSRF_HEADER, SESSION_PREFIX } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { createSwitchyardClient, CSRF_HEADER } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();

type Seen = { credentials?: RequestInit['credentials']; csrf: (string | null)[] };

async function signIn(): Promise<{ cookie: string; csrfToken: string }> {
  const res = await fetch(`${env.server.url}${SESSION_PREFIX}/sign-in`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.server.managementKey}` },
  });
  expect(res.status).toBe(201);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { data } = (await res.json()) as { data: { csrf_token: string } };
  return { cookie, csrfToken: data.csrf_token };
}

/** What a browser does with the cookie jar: every request to the server carries the cookie; records what fetch was asked. */
function browserFetch(cookie: string, seen: Seen): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    seen.credentials = init?.credentials;
    seen.csrf.push(headers.get(CSRF_HEADER));
    headers.set('cookie', cookie);
    return fetch(input, { ...init, headers });
  };
}

describe('@switchyard/client with a session', () => {
  it("uses the schema's CSRF header name", () => {
    expect(CSRF_HEADER).toBe(SCHEMA_CSRF_HEADER);
  });

  it('queries and mutates with the session cookie and its CSRF token, sending credentials', async () => {
    const { cookie, csrfToken } = await signIn();
    const seen: Seen = { csrf: [] };
    const client = createSwitchyardClient({ url: env.server.url, session: { csrfToken }, fetch: browserFetch(cookie, seen) });

    const current = await client.sessions.current.query();
    expect(current.session?.csrf_token).toBe(csrfToken);
    expect(seen.credentials).toBe('same-origin');

    const created = await client.keys.create.mutate({ name: 'made in a session', limit: 3 });
    expect(created.data).toMatchObject({ name: 'made in a session', limit: 3, disabled: false });
    expect(seen.csrf.at(-1)).toBe(csrfToken);
    const listed = await client.keys.list.query({});
    expect(listed.data.map((k) => k.hash)).toContain(created.data.hash);

    expect(await client.sessions.signOut.mutate()).toEqual({ ended: 1 });
    expect((await failure(client.keys.list.query({}))).status).toBe(401);
  });

  it('sends credentials: include when asked (a console on another origin of the same site)', async () => {
    const { cookie, csrfToken } = await signIn();
    const seen: Seen = { csrf: [] };
    const client = createSwitchyardClient({ url: env.server.url, session: { csrfToken, credentials: 'include' }, fetch: browserFetch(cookie, seen) });
    expect((await client.sessions.current.query()).session?.csrf_token).toBe(csrfToken);
    expect(seen.credentials).toBe('include');
  });

  it('without the CSRF token, a query answers and a mutation is refused (403) before it runs', async () => {
    const { cookie, csrfToken } = await signIn();
    const seen: Seen = { csrf: [] };
    const client = createSwitchyardClient({ url: env.server.url, session: {}, fetch: browserFetch(cookie, seen) });
    // What a reloaded page does: the token again from sessions.current, which needs none.
    expect((await client.sessions.current.query()).session?.csrf_token).toBe(csrfToken);
    expect(seen.csrf).toEqual([null]);
    const refused = await failure(client.keys.create.mutate({ name: 'no token' }));
    expect(refused.status).toBe(403);
    const keys = await createSwitchyardClient({ url: env.server.url, apiKey: env.server.managementKey }).keys.list.query({});
    expect(keys.data.map((k) => k.name)).not.toContain('no token');
  });
});
