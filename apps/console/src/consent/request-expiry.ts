import { useEffect, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ApiFailure, api, unwrap } from '../api/client';
import { forgetRequest } from './pending-request';

/**
 * When the request stops being answerable, by this browser's clock: the moment the page read it
 * plus the seconds the broker said it had left (`expires_in`, by the broker's own clock), so a
 * browser clock that is off ends it neither early nor late.
 */
export function requestDeadline(readAt: number, expiresIn: number): number {
  return readAt + expiresIn * 1000;
}

/** Whether the deadline (ms, this browser's clock) has passed now; never without one. */
export function isPast(deadline: number | null | undefined): boolean {
  return deadline !== null && deadline !== undefined && Date.now() >= deadline;
}

/** The broker refused an answer because the request's token expired (400 `session_expired`). */
export function isExpiredRefusal(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 400 && error.code === 'session_expired';
}

/** Whether `deadline` (ms, this browser's clock) has passed; turns true when it does, by a timer. */
export function useDeadlinePassed(deadline: number | null): boolean {
  const [passed, setPassed] = useState(false);
  useEffect(() => {
    if (deadline === null) return;
    // A timer also when already past (0 ms): the state changes outside the effect's own run.
    const timer = window.setTimeout(() => setPassed(true), Math.max(0, deadline - Date.now()));
    return () => window.clearTimeout(timer);
  }, [deadline]);
  return passed;
}

/**
 * "Return to the application" after the request expired: the broker ends it at the client's
 * redirect_uri with `error=access_denied` (RFC 6749 §4.1.2.1), checked as for Deny, once.
 */
export function useReturnExpired(agentId: string, sessionToken: string) {
  return useMutation({
    mutationFn: async () =>
      (
        await unwrap(
          api.POST('/api/consent/agents/{agentId}/expired', {
            params: { path: { agentId }, query: { session_token: sessionToken } },
          }),
        )
      ).data,
    onSettled: () => forgetRequest(agentId),
  });
}
