import { describe, expect, it } from 'vitest';
import type { ApprovalNow } from '../api/queries';
import {
  KIND_GROUPS,
  KIND_LABELS,
  accessRequestSentence,
  outcomeBadge,
  requestBadge,
  requestOutcomeWords,
} from './kinds';

describe('activity badges say what came of the event', () => {
  it('a denial, a revocation, an expiry or a declined consent is never a green "Succeeded"', () => {
    for (const kind of [
      'approval.denied',
      'grant.revoked',
      'approval.revoked',
      'grant.expired',
      'approval.expired',
      'consent.denied',
      'session.disconnected',
      'session.needs_reauthentication',
      'approval.requested',
      'enterprise_access.revoked',
    ] as const) {
      const badge = outcomeBadge(kind, 'success');
      expect(badge.label, kind).not.toBe('Succeeded');
      expect(badge.tone, kind).not.toBe('success');
    }
    expect(outcomeBadge('approval.denied', 'success')).toEqual({ label: 'Denied', tone: 'danger' });
    expect(outcomeBadge('consent.denied', 'success')).toEqual({ label: 'Declined', tone: 'warning' });
  });

  it('what went through says so; a failure is a failure', () => {
    expect(outcomeBadge('token.exchanged', 'success')).toEqual({ label: 'Succeeded', tone: 'success' });
    expect(outcomeBadge('approval.approved', 'success')).toEqual({ label: 'Approved', tone: 'success' });
    expect(outcomeBadge('token.exchanged', 'failure')).toEqual({ label: 'Failed', tone: 'danger' });
    expect(outcomeBadge('refresh_token.reused', 'failure')).toEqual({ label: 'Stopped', tone: 'danger' });
  });

  it('a declined consent is a kind the person can filter by', () => {
    expect(KIND_LABELS['consent.denied']).toBe('Access declined');
    expect(KIND_GROUPS.flatMap((group) => group.kinds)).toContain('consent.denied');
  });

  it("what the person's organisation allowed, and its revocation, read in the person's words; a refusal as a refusal", () => {
    expect(KIND_LABELS['enterprise_access.decided']).toBe('Allowed by your organisation');
    expect(KIND_LABELS['enterprise_access.revoked']).toBe('Organisation access revoked');
    expect(outcomeBadge('enterprise_access.decided', 'success')).toEqual({ label: 'Allowed', tone: 'success' });
    expect(outcomeBadge('enterprise_access.decided', 'failure')).toEqual({ label: 'Refused', tone: 'danger' });
    expect(outcomeBadge('enterprise_access.revoked', 'success')).toEqual({ label: 'Revoked', tone: '' });
    const filterable = KIND_GROUPS.flatMap((group) => group.kinds);
    expect(filterable).toContain('enterprise_access.decided');
    expect(filterable).toContain('enterprise_access.revoked');
  });

  it('an approval request says "Waiting for you" only while it waits; decided, it says how; unknown, it claims nothing', () => {
    const found = (status: 'pending' | 'approved' | 'denied' | 'revoked'): ApprovalNow =>
      ({ kind: 'found', approval: { status } }) as unknown as ApprovalNow;
    expect(requestBadge(found('pending'))).toEqual({ label: 'Waiting for you', tone: 'warning' });
    expect(requestBadge(found('approved'))).toEqual({ label: 'Approved', tone: 'success' });
    expect(requestBadge(found('denied'))).toEqual({ label: 'Denied', tone: 'danger' });
    expect(requestBadge(found('revoked'))).toEqual({ label: 'Revoked', tone: '' });
    expect(requestBadge({ kind: 'expired' })).toEqual({ label: 'Expired', tone: '' });
    for (const unknown of [undefined, { kind: 'gone' } as const]) {
      expect(requestBadge(unknown)).toEqual({ label: 'Requested', tone: '' });
    }
    expect(outcomeBadge('approval.requested', 'success').label).not.toBe('Waiting for you');
  });

  it('says what became of a request: the decision, and a revocation without one as the end of the agent’s access', () => {
    type Record = Parameters<typeof requestOutcomeWords>[0];
    const at = '2026-11-29T10:00:00.000Z';
    const record = (fields: Partial<Record>): Record =>
      ({
        status: 'pending',
        persistence: null,
        approved_at: null,
        denied_at: null,
        revoked_at: null,
        consumed_at: null,
        ...fields,
      }) as Record;
    expect(requestOutcomeWords(record({}))).toBeNull();
    expect(requestOutcomeWords(record({ status: 'approved', persistence: 'permanent', approved_at: at }))).toBe(
      'You approved it always, until you revoke it',
    );
    expect(
      requestOutcomeWords(record({ status: 'approved', persistence: 'once', approved_at: at, consumed_at: at })),
    ).toBe('You approved it for this call only, and the call was made');
    expect(requestOutcomeWords(record({ status: 'denied', persistence: 'permanent', denied_at: at }))).toBe(
      'You denied it always',
    );
    expect(
      requestOutcomeWords(record({ status: 'revoked', persistence: 'permanent', approved_at: at, revoked_at: at })),
    ).toBe('You approved it always; that decision was revoked since');
    // Pending when the person revoked the agent: never "You revoked its remembered decision".
    expect(requestOutcomeWords(record({ status: 'revoked', revoked_at: at }))).toBe(
      'It ended without a decision when the agent’s access was revoked',
    );
  });

  it("an agent's access request, from the ask to its end, reads as a sentence; a denial or an expiry is no green badge", () => {
    const say = (type: Parameters<typeof accessRequestSentence>[0], opener: string | null = null) =>
      accessRequestSentence(type, 'Trip Planner', 'Mail', opener);
    expect(say('authorization_request.created')).toBe('Trip Planner asked for access to Mail');
    expect(say('authorization_request.completed')).toBe('You allowed Trip Planner access to Mail');
    expect(say('authorization_request.denied')).toBe('You denied Trip Planner access to Mail');
    expect(say('authorization_request.expired')).toBe("The link for Trip Planner's access to Mail expired");
    expect(say('authorization_request.misdirected', 'bob@example.com')).toBe(
      "Someone else (bob@example.com) opened your link for Trip Planner's access to Mail",
    );
    expect(say('authorization_request.misdirected')).toBe(
      "Someone else opened your link for Trip Planner's access to Mail",
    );
    expect(say('grant.created')).toBeNull();
    for (const kind of ['authorization_request.denied', 'authorization_request.expired'] as const)
      expect(outcomeBadge(kind, 'success').tone, kind).not.toBe('success');
    // Recorded as a failure: the opener was refused; the owner's link is untouched.
    expect(outcomeBadge('authorization_request.misdirected', 'failure')).toEqual({
      label: 'Refused',
      tone: 'warning',
    });
    expect(outcomeBadge('authorization_request.completed', 'success')).toEqual({ label: 'Allowed', tone: 'success' });
    const filterable = KIND_GROUPS.flatMap((group) => group.kinds);
    for (const kind of [
      'authorization_request.created',
      'authorization_request.completed',
      'authorization_request.denied',
      'authorization_request.expired',
      'authorization_request.misdirected',
    ] as const)
      expect(filterable).toContain(kind);
  });
});
