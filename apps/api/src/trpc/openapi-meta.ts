// The meta.openapi of procedures on REST under one tag: method, path and documentation, always behind a key.
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export function routesOf(tag: string) {
  return (method: Method, path: `/${string}`, summary: string, description: string) => ({
    openapi: { method, path, protect: true, tags: [tag], summary, description },
  });
}
