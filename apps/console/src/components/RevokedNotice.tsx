import { useEffect, useRef, useState } from 'react';

/**
 * The confirmation a list page shows after a revocation. The revoked card is gone, so focus goes to the page's
 * heading (`heading`, on an `<h1 tabIndex={-1}>`), just above the confirmation.
 */
export function useRevokedNotice() {
  const [notice, setNotice] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (notice !== null) heading.current?.focus();
  }, [notice]);
  return { notice, setNotice, heading };
}

/** Where the confirmation appears: always present, so the confirmation is announced when it appears. */
export function RevokedNotice({ notice }: { notice: string | null }) {
  return <div role="status">{notice !== null ? <p className="notice success">{notice}</p> : null}</div>;
}
