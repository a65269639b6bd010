import { CryptoRandom, OAuthError } from '@broker/domain';
import type { AnyBrokerEvent, EventLedger } from '@broker/events';
import type {
  AuthorizationRequestCreate,
  AuthorizationRequestRepository,
  AuthorizationRequestRecord,
  NewAuthorizationRequest,
  OfferedPermissionSet,
} from '@broker/persistence';
import { FrozenClock, testConfig } from '@broker/testing';
import type { PinoLogger } from 'nestjs-pino';
import { describe, expect, it } from 'vitest';
import { AuthorizationRequestOffers, type OfferableRefusal } from './authorization-request-offers';

const AGENT = '0af76519-16cd-43dd-8448-eb211c80319c';
const SERVICE = '5e0c7b1a-3f1d-4c5e-9a0b-2d6f8e9a1b2c';
const SET = '9b2f6a4e-8c1d-4f3b-a5e7-1c9d0b2e3f4a';
const NOW = '2026-03-01T10:00:00.000Z';

/** A store that makes one request per call, counting calls; `offered` is what the agent's permission sets offer. */
function fakeStore(offered: OfferedPermissionSet[], outcome: 'created' | 'rate_limited' | 'fails' = 'created') {
  const calls = { create: 0, offered: 0 };
  const store = {
    offeredPermissionSets: () => {
      calls.offered += 1;
      return Promise.resolve(offered);
    },
    create: async (
      request: NewAuthorizationRequest,
      _limits: unknown,
      now: Date,
    ): Promise<AuthorizationRequestCreate> => {
      calls.create += 1;
      // Several refusals arrive while the round trip is in flight.
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (outcome === 'fails') throw new Error('database down');
      if (outcome === 'rate_limited') return { kind: 'rate_limited', expired: [] };
      const record: AuthorizationRequestRecord = {
        ...request,
        scopes: [...request.scopes].sort(),
        status: 'pending',
        allowedAt: null,
        answeredAt: null,
        createdAt: now,
      };
      return { kind: 'created', record, expired: [] };
    },
  };
  return { store: store as unknown as AuthorizationRequestRepository, calls };
}

function offers(store: AuthorizationRequestRepository, enabled = true) {
  const events: AnyBrokerEvent[] = [];
  const ledger = { enqueue: (event: AnyBrokerEvent) => events.push(event) } as unknown as EventLedger;
  const logger = { setContext: () => undefined, warn: () => undefined } as unknown as PinoLogger;
  const config = testConfig({
    server: { enduser: { public_url: 'https://broker.example.com' } },
    authorization_requests: { enabled, expiry: '5m' },
  });
  return {
    offers: new AuthorizationRequestOffers(config, store, new FrozenClock(NOW), new CryptoRandom(), ledger, logger),
    events,
  };
}

const refusal = (overrides: Partial<OfferableRefusal> = {}): OfferableRefusal => ({
  error: new OAuthError('access_denied', 'no active grant delegates this service to the agent'),
  principal: 'alice',
  agentId: AGENT,
  serviceId: SERVICE,
  requestedScopes: [],
  needsGrant: true,
  needsConnection: false,
  gateway: 'gateway-1',
  ...overrides,
});

describe('AuthorizationRequestOffers', () => {
  it('adds the link to the refusal, keeping its code, description and error_uri', async () => {
    const { store } = fakeStore([{ permissionSetId: SET, scopes: ['mail.read'] }]);
    const { offers: subject, events } = offers(store);
    const withUri = new OAuthError('invalid_grant', 'reconnect', 'https://broker.example.com/api/third-party/x');
    const answered = await subject.offer(refusal({ error: withUri, needsGrant: false, needsConnection: true }));
    expect(answered).toMatchObject({ code: 'invalid_grant', description: 'reconnect', errorUri: withUri.errorUri });
    const member = answered.members?.authorization_request as Record<string, unknown>;
    expect(member).toEqual({
      id: expect.any(String) as string,
      url: `https://broker.example.com/authorization-requests/${member.id as string}`,
      expires_at: '2026-03-01T10:05:00.000Z',
      expires_in: 300,
    });
    expect(events.map((event) => [event.type, event.actor])).toEqual([
      ['authorization_request.created', { type: 'gateway', id: 'gateway-1' }],
    ]);
  });

  it('makes one round trip for a storm of identical refusals (scopes in any order), and one per distinct key', async () => {
    const { store, calls } = fakeStore([{ permissionSetId: SET, scopes: ['a', 'b'] }]);
    const { offers: subject, events } = offers(store);
    const storm = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        subject.offer(refusal({ requestedScopes: i % 2 === 0 ? ['a', 'b'] : ['b', 'a'] })),
      ),
    );
    expect(calls.create).toBe(1);
    expect(new Set(storm.map((error) => (error.members?.authorization_request as { id: string }).id)).size).toBe(1);
    expect(events).toHaveLength(1);
    await Promise.all([
      subject.offer(refusal({ principal: 'bob' })),
      subject.offer(refusal({ requestedScopes: ['a'] })),
    ]);
    expect(calls.create).toBe(3);
  });

  it('adds nothing when no permission set of the agent names the service, over a limit, when off, or when the store fails', async () => {
    const plain = refusal().error;
    const none = fakeStore([]);
    expect(await offers(none.store).offers.offer(refusal({ error: plain }))).toBe(plain);
    expect(none.calls.create).toBe(0);
    const limited = fakeStore([{ permissionSetId: SET, scopes: [] }], 'rate_limited');
    expect(await offers(limited.store).offers.offer(refusal({ error: plain }))).toBe(plain);
    const off = fakeStore([{ permissionSetId: SET, scopes: [] }]);
    expect(await offers(off.store, false).offers.offer(refusal({ error: plain }))).toBe(plain);
    expect(off.calls).toEqual({ create: 0, offered: 0 });
    const failing = fakeStore([{ permissionSetId: SET, scopes: [] }], 'fails');
    expect(await offers(failing.store).offers.offer(refusal({ error: plain }))).toBe(plain);
  });

  it('reuses the permission sets the caller already read', async () => {
    const { store, calls } = fakeStore([]);
    const { offers: subject } = offers(store);
    const answered = await subject.offer(refusal({ offered: [{ permissionSetId: SET, scopes: ['x'] }] }));
    expect(answered.members?.authorization_request).toBeDefined();
    expect(calls.offered).toBe(0);
  });
});
