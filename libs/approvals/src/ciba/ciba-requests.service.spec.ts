import type { ApprovalRecord, ParamsPattern } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { argumentsHash } from '../patterns/canonical-json';
import { rememberedAnswer } from './ciba-requests.service';

let next = 0;
function decision(
  status: 'approved' | 'denied',
  reviewed: Record<string, unknown>,
  pattern: ParamsPattern | null,
  persistence: 'permanent' | 'session' = 'permanent',
): ApprovalRecord {
  next += 1;
  return {
    id: `d-${next}`,
    principal: 'alice@example.com',
    agentId: 'agent',
    toolName: 'send_payment',
    arguments: reviewed,
    argumentsHash: argumentsHash(reviewed),
    metadata: {},
    riskLevel: null,
    agentSessionId: persistence === 'session' ? 's-1' : null,
    status,
    persistence,
    paramsPattern: pattern,
    consumed: false,
    listed: true,
    createdAt: new Date(0),
    expiresAt: null,
    approvedAt: status === 'approved' ? new Date(0) : null,
    deniedAt: status === 'denied' ? new Date(0) : null,
    consumedAt: null,
    revokedAt: null,
    ciba: null,
  };
}

const answer = (decisions: ApprovalRecord[], call: Record<string, unknown>) =>
  rememberedAnswer(decisions, call, argumentsHash(call));

describe('the remembered decision that answers a CIBA request at once', () => {
  it('matches a null pattern by the arguments hash (key order does not matter), a pattern by its globs', () => {
    const exact = decision('approved', { to: 'a@example.com', amount: 5 }, null);
    expect(answer([exact], { amount: 5, to: 'a@example.com' })).toEqual({ status: 'approved', rememberedId: exact.id });
    expect(answer([exact], { amount: 6, to: 'a@example.com' })).toBeUndefined();
    const widened = decision('approved', { to: 'a@example.com', amount: 5 }, { to: '*@example.com' });
    expect(answer([widened], { to: 'b@example.com', amount: 900 })).toEqual({
      status: 'approved',
      rememberedId: widened.id,
    });
    expect(answer([widened], { to: 'b@evil.example', amount: 5 })).toBeUndefined();
    // A named argument the call does not have matches nothing.
    expect(answer([widened], { amount: 5 })).toBeUndefined();
  });

  it('lets a covering denial win over a covering approval, whatever their order', () => {
    const approval = decision('approved', {}, {});
    const denial = decision('denied', { to: 'x@example.com' }, null);
    const call = { to: 'x@example.com' };
    expect(answer([approval, denial], call)).toEqual({ status: 'denied', rememberedId: denial.id });
    expect(answer([denial, approval], call)).toEqual({ status: 'denied', rememberedId: denial.id });
    expect(answer([approval, denial], { to: 'y@example.com' })).toEqual({
      status: 'approved',
      rememberedId: approval.id,
    });
  });

  it('never applies a session approval (a backchannel request has no agent session)', () => {
    expect(answer([decision('approved', {}, {}, 'session')], {})).toBeUndefined();
  });
});
