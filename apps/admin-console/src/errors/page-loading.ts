/**
 * Loading a page's own file (its code-split chunk) when the person first opens it, and what happens when that fails.
 *
 * Two causes look the same to the browser ("Failed to fetch dynamically imported module"):
 * - the broker is not answering (stopped, restarting, the network is down): reloading would only trade the console
 *   for the browser's own error page, so the console says so and waits for the broker (`RouteError`);
 * - the broker answers but the file is gone: the console was upgraded while this tab stayed open, and the files this
 *   tab knows were replaced by new ones. Reloading fetches the new console, so the page reloads once by itself; if
 *   the file is still missing after that one reload, the console says so instead of reloading again (no loop).
 */

const RELOADED_KEY = 'broker.admin-console.reloaded-for';

/** The page's file could not be loaded although the broker answers (after the one reload, or storage refused it). */
export class PageFileMissing extends Error {
  constructor() {
    super('page file missing');
    this.name = 'PageFileMissing';
  }
}

/** The page's file could not be loaded and the broker does not answer. */
export class BrokerNotAnswering extends Error {
  constructor() {
    super('broker not answering');
    this.name = 'BrokerNotAnswering';
  }
}

/**
 * Whether the broker answers at all: the console's own address, asked again without cache. Any answer below 500
 * counts (the console's addresses answer its page, even 404 for an unknown one); no answer or a 5xx does not.
 */
export async function brokerAnswers(href: string = window.location.href): Promise<boolean> {
  try {
    const response = await fetch(href, {
      method: 'HEAD',
      cache: 'no-store',
      credentials: 'same-origin',
    });
    return response.status < 500;
  } catch {
    return false;
  }
}

function reloadedFor(): string | null {
  try {
    return window.sessionStorage.getItem(RELOADED_KEY);
  } catch {
    return null;
  }
}

/** Remembers that this address was reloaded once for a missing file; false when storage refuses (no reload then). */
function rememberReload(path: string): boolean {
  try {
    window.sessionStorage.setItem(RELOADED_KEY, path);
    return true;
  } catch {
    return false;
  }
}

function forgetReload(): void {
  try {
    window.sessionStorage.removeItem(RELOADED_KEY);
  } catch {
    // Nothing was stored.
  }
}

let navigatingTo: () => { pathname: string; search: string; hash: string } | undefined = () => undefined;

/**
 * Where the router is going: a page's file loads before the router commits the navigation, so the address bar
 * still shows the page the person is leaving. Set once by the router (`router.tsx`).
 */
export function followNavigation(pending: () => { pathname: string; search: string; hash: string } | undefined): void {
  navigatingTo = pending;
}

/** `import()` of a page's module, with the failure handling above. */
export async function loadPage<T>(load: () => Promise<T>): Promise<T> {
  try {
    const module = await load();
    forgetReload();
    return module;
  } catch {
    const next = navigatingTo() ?? window.location;
    const path = next.pathname + next.search;
    if (!(await brokerAnswers(path))) throw new BrokerNotAnswering();
    if (reloadedFor() !== path && rememberReload(path)) {
      // A full load of the page the person asked for: the new console's files.
      window.location.assign(path + next.hash);
      // The page is going away: nothing renders meanwhile.
      return new Promise<T>(() => undefined);
    }
    throw new PageFileMissing();
  }
}
