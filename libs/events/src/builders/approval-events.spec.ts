import type { ApprovalRecord } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { approvalEvent, approvalExpired } from './approval-events';

const args = { to: 'someone@example.com', attachment: { path: '/secret/report.pdf' } };
/** The stored hash of the arguments (approvals' `argumentsHash`); the builder copies it, never computes it. */
const ARGUMENTS_SHA256 = 'a'.repeat(64);
const record: ApprovalRecord = {
  id: 'a1',
  principal: 'alice@example.com',
  agentId: 'agent-1',
  toolName: 'send_email',
  arguments: args,
  argumentsHash: ARGUMENTS_SHA256,
  metadata: { note: 'metadata-value' },
  riskLevel: 'critical',
  agentSessionId: null,
  status: 'approved',
  persistence: 'permanent',
  paramsPattern: null,
  consumed: false,
  listed: true,
  createdAt: new Date(0),
  expiresAt: null,
  approvedAt: new Date(0),
  deniedAt: null,
  consumedAt: null,
  revokedAt: null,
  ciba: null,
};

describe('approval events', () => {
  it('name the arguments and hash their canonical JSON, never a value or the metadata', () => {
    const event = approvalEvent('approval.approved', record, { type: 'principal', id: 'alice@example.com' }, 'trace-1');
    expect(event).toEqual({
      type: 'approval.approved',
      actor: { type: 'principal', id: 'alice@example.com' },
      principal: 'alice@example.com',
      agentId: 'agent-1',
      serviceId: null,
      outcome: 'success',
      traceId: 'trace-1',
      details: {
        approval_id: 'a1',
        tool_name: 'send_email',
        risk_level: 'critical',
        argument_names: ['attachment', 'to'],
        arguments_sha256: ARGUMENTS_SHA256,
        persistence: 'permanent',
      },
    });
    const text = JSON.stringify(event);
    for (const value of ['someone@example.com', '/secret/report.pdf', 'metadata-value'])
      expect(text).not.toContain(value);
  });

  it('an expiry is the broker’s, outside any request', () => {
    expect(approvalExpired(record)).toMatchObject({
      type: 'approval.expired',
      actor: { type: 'broker', id: null },
      traceId: null,
      details: { approval_id: 'a1' },
    });
    expect(approvalExpired(record).details).not.toHaveProperty('persistence');
  });
});
