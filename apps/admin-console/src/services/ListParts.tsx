import { Link } from 'react-router';
import { useReadOnly } from '../api/queries';
import { READ_ONLY_REASON } from '../components/ReadOnly';

/** The registry list pages' shared pieces. */

export function ScopeChips({ scopes }: { readonly scopes: readonly string[] }) {
  if (scopes.length === 0) return <>None</>;
  return (
    <span className="chips">
      {scopes.map((scope) => (
        <code key={scope} className="chip">
          {scope}
        </code>
      ))}
    </span>
  );
}

/** A list page's "new" action: a link, or for a viewer a disabled button saying why. */
export function NewButton({ to, label }: { readonly to: string; readonly label: string }) {
  if (useReadOnly())
    return (
      <button
        type="button"
        className="button primary"
        disabled
        title={READ_ONLY_REASON}
        aria-description={READ_ONLY_REASON}
      >
        {label}
      </button>
    );
  return (
    <Link className="button primary" to={to}>
      {label}
    </Link>
  );
}
