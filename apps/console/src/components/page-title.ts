import { useEffect } from 'react';

const PRODUCT = 'Agent Identity Broker';

/** `Approvals · Agent Identity Broker`: the page's own title first, as a tab or a screen reader announces it. */
export function pageTitle(title: string): string {
  return `${title} · ${PRODUCT}`;
}

/** Sets the document title while the page is shown. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = pageTitle(title);
  }, [title]);
}
