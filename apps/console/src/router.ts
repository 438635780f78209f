// A URL for every view (history routing under /console/): the server answers index.html for every
// /console/* path, so a shared or reloaded URL opens the same view.
import { useCallback, useEffect, useState } from 'react';

export const BASE = '/console';

/** The view's path inside the console ("/keys"), from the browser's location. */
export function currentPath(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : window.location.pathname;
  return path === '' ? '/' : path;
}

const listeners = new Set<() => void>();

/** Goes to a view; `replace` leaves no history entry (a redirect). */
export function navigate(path: string, replace = false): void {
  const url = `${BASE}${path}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** An onClick for links: the browser's own handling for a new tab or window, the router's otherwise. */
export function useLinkClick(path: string): (event: React.MouseEvent<HTMLAnchorElement>) => void {
  return useCallback(
    (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate(path);
    },
    [path],
  );
}
