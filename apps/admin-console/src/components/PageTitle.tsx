import { useEffect, type ReactNode } from 'react';

const PRODUCT = 'Admin console · Agent Identity Broker';

/** `Signing keys · Admin console · Agent Identity Broker`: the page's own title first, as a tab or a screen reader says it. */
export function pageTitle(title: string): string {
  return `${title} · ${PRODUCT}`;
}

/** Sets the document title while the page is shown. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = pageTitle(title);
  }, [title]);
}

/**
 * The page's heading (its one `<h1>`) and document title, with an optional sentence under it and the page's main
 * actions (a "New agent" link) on the right.
 */
export function PageTitle(props: { readonly title: string; readonly lead?: ReactNode; readonly actions?: ReactNode }) {
  const { title, lead, actions } = props;
  usePageTitle(title);
  return (
    <div className="page-header">
      <div>
        <h1>{title}</h1>
        {lead !== undefined ? <p>{lead}</p> : null}
      </div>
      {actions !== undefined ? <div className="actions">{actions}</div> : null}
    </div>
  );
}
