// The page's route, from the URL path: `/` (board), `/new`, `/sessions/{id}`, `/operations`,
// `/history`, `/knowledge`, `/hosts`, `/admin`.

/** Where the operator is. */
export type Route =
  | { page: 'board' }
  | { page: 'session'; id: string }
  | { page: 'operations' }
  | { page: 'new' }
  | { page: 'history' }
  | { page: 'knowledge' }
  | { page: 'hosts' }
  | { page: 'admin' }
  | { page: 'missing'; path: string };

/** Reads a route from a path. */
export function parseRoute(path: string): Route {
  const clean = path.replace(/\/+$/, '') || '/';
  if (clean === '/') return { page: 'board' };
  if (clean === '/operations') return { page: 'operations' };
  if (clean === '/new') return { page: 'new' };
  if (clean === '/history') return { page: 'history' };
  if (clean === '/knowledge') return { page: 'knowledge' };
  if (clean === '/hosts') return { page: 'hosts' };
  if (clean === '/admin') return { page: 'admin' };
  const session = /^\/sessions\/([0-9a-fA-F-]{36})$/.exec(clean);
  if (session) return { page: 'session', id: session[1].toLowerCase() };
  return { page: 'missing', path };
}

/** The current route, kept in step with the address bar. */
export const router = $state<{ route: Route }>({ route: parseRoute(location.pathname) });

/** Goes to a path inside the app without a page load; `replace` keeps the history entry. */
export function navigate(path: string, replace = false): void {
  const [pathname] = path.split('?');
  if (path !== location.pathname + location.search) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
  }
  router.route = parseRoute(pathname);
}

addEventListener('popstate', () => {
  router.route = parseRoute(location.pathname);
});

/** Click handler for in-app links: plain clicks navigate in place, modified clicks open as usual. */
export function link(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  const href = anchor?.getAttribute('href');
  if (!href || !href.startsWith('/')) return;
  event.preventDefault();
  navigate(href);
}
