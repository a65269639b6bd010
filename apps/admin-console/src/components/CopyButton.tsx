import { useEffect, useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

/**
 * Copies `value` to the clipboard. `label` names what is copied for a screen reader ("Copy callback URL"); the
 * outcome is announced ("Copied") through a polite live region next to the button.
 */
export function CopyButton(props: { readonly value: string; readonly label: string }) {
  const { value, label } = props;
  const [state, setState] = useState<CopyState>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = window.setTimeout(() => setState('idle'), 4_000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" className="button small" aria-label={label} onClick={() => void copy()}>
        Copy
      </button>
      <span className="copy-status" role="status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Not copied: select the text and copy it' : ''}
      </span>
    </span>
  );
}
