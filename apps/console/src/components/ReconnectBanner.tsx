/**
 * The broker stopped answering a refresh while the page already shows its data: the data
 * stays, with this banner above it (announced politely, never replacing the page) and a
 * Retry (nothing while the query's refreshes succeed). The queries keep retrying by themselves (polling, focus), so it goes away as soon as
 * one answers.
 */
export function ReconnectBanner({
  query,
}: {
  query: { isRefetchError: boolean; isFetching: boolean; refetch: () => Promise<unknown> };
}) {
  if (!query.isRefetchError) return null;
  const retrying = query.isFetching;
  return (
    <div className="notice warning reconnect" role="status">
      <span>
        <strong>The broker is not answering.</strong> {retrying ? 'Reconnecting…' : 'What you see may be out of date.'}
      </span>
      <button type="button" className="button" disabled={retrying} onClick={() => void query.refetch()}>
        Retry
      </button>
    </div>
  );
}
