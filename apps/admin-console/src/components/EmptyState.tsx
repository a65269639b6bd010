import type { ReactNode } from 'react';

/** A list with nothing in it yet: what would be here, and how to add the first one. */
export function EmptyState(props: {
  readonly title: string;
  readonly children?: ReactNode;
  readonly action?: ReactNode;
}) {
  const { title, children, action } = props;
  return (
    <section className="panel empty">
      <h2>{title}</h2>
      {children !== undefined ? <div className="empty-text">{children}</div> : null}
      {action !== undefined ? <div className="empty-action">{action}</div> : null}
    </section>
  );
}
