import { useState } from 'react';
import { useAllow, useDeny } from '../api/queries';
import type { Grant, GrantRequest } from './types';
import { leaveFor } from './navigation';
import { isExpiredRefusal, isPast } from './request-expiry';

/**
 * Allow and Deny as both consent forms send them: never after the request's time is up (`deadline`, even
 * before the timer said so), the page told while an answer is on its way (`onSending`), an expired refusal
 * reported (`onExpired`), and, once answered, back to the application (or a sentence saying the page can
 * be closed). Without an authorization request (`sessionToken` null) Allow saves the grant and stays.
 */
export function useRequestAnswer(
  agentId: string,
  sessionToken: string | null,
  {
    deadline,
    onExpired,
    onSending,
  }: { deadline: number | null; onExpired?: () => void; onSending?: (sending: boolean) => void },
) {
  const [leaving, setLeaving] = useState<string | null>(null);
  const allow = useAllow(agentId, sessionToken);
  const deny = useDeny(agentId, sessionToken ?? '');
  const busy = allow.isPending || deny.isPending || leaving !== null;

  /** False, and `onExpired` told, when the request can no longer be answered. */
  function answerable(): boolean {
    if (!isPast(deadline)) return true;
    onExpired?.();
    return false;
  }

  function refused(error: unknown) {
    onSending?.(false);
    if (isExpiredRefusal(error)) onExpired?.();
  }

  /** Allow with `body`; `onSaved` gets the saved grant when there is no application to return to. */
  function send(body: GrantRequest, onSaved?: (grant: Grant) => void) {
    onSending?.(true);
    allow.mutate(body, {
      onError: refused,
      onSuccess: (answer) => {
        if (answer === null) return;
        if (sessionToken !== null && answer.redirect_url !== undefined) {
          setLeaving('Access allowed. Returning you to the application…');
          if (!leaveFor(answer.redirect_url))
            setLeaving('Access allowed. You can close this page and return to the application.');
          return;
        }
        onSaved?.(answer.data);
      },
    });
  }

  function decline() {
    if (busy || sessionToken === null || !answerable()) return;
    onSending?.(true);
    deny.mutate(undefined, {
      onError: refused,
      onSuccess: ({ redirect_url }) => {
        setLeaving('Request denied. Returning you to the application…');
        if (!leaveFor(redirect_url)) setLeaving('Request denied. You can close this page.');
      },
    });
  }

  return { allow, busy, leaving, failure: allow.error ?? deny.error, answerable, send, decline };
}
