import type { ReactNode } from 'react';
import { ErrorView, Loading } from '../errors/ErrorView';
import { ReconnectBanner } from './ReconnectBanner';

/**
 * A page's read: why it failed (`failed`, the error view by default) or the loading line until its data
 * is there; then the reconnect banner (the data stays when a refresh fails) and what `children` shows of it.
 */
export function PageRead<T>({
  query,
  loading,
  failed = (error) => <ErrorView error={error} />,
  children,
}: {
  query: Parameters<typeof ReconnectBanner>[0]['query'] & { data: T | undefined; isError: boolean; error: unknown };
  loading: string;
  failed?: (error: unknown) => ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.data === undefined) return query.isError ? failed(query.error) : <Loading label={loading} />;
  return (
    <>
      <ReconnectBanner query={query} />
      {children(query.data)}
    </>
  );
}
