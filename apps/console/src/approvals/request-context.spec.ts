import { describe, expect, it } from 'vitest';
import { directRequest, requestContext, reviewOrder, toolTitle } from './request-context';

describe('a request in words', () => {
  it("takes the reason, the tool's title and description out of the metadata; the rest stays context", () => {
    // Parsed, as the API's JSON is: `__proto__` is a key like any other.
    const context = requestContext(
      JSON.parse(
        '{"reason":" To file your Q3 report ","tool_title":"Read a file","tool_description":"Reads one file.","agent_session_id":"s-1","trace":{"id":7},"__proto__":"kept"}',
      ) as Record<string, unknown>,
    );
    expect(context).toMatchObject({
      reason: 'To file your Q3 report',
      title: 'Read a file',
      description: 'Reads one file.',
    });
    expect(Object.keys(context.rest)).toEqual(['trace', '__proto__']);
    expect(toolTitle({ tool_name: 'read_file', metadata: {} })).toBe('read_file');
    expect(toolTitle({ tool_name: 'read_file', metadata: { tool_title: 'Read a file' } })).toBe('Read a file');
  });

  it("reads an agent's standard request from its authorization_details entry; a gateway's request has none", () => {
    const ciba = {
      tool_name: 'send_payment',
      metadata: { tool_title: 'Not this one' },
      requested_via: 'ciba' as const,
      binding_message: 'BLUE-42',
      mcp_server_display_name: 'Payments',
      authorization_details: [
        {
          type: 'urn:agent-identity-broker:tool-call',
          locations: ['https://mcp.example.com/mcp'],
          tool: 'send_payment',
          title: ' Send a payment ',
          description: 'Pays an invoice',
          arguments: {},
        },
      ],
    };
    expect(directRequest(ciba)).toEqual({
      title: 'Send a payment',
      description: 'Pays an invoice',
      serverUri: 'https://mcp.example.com/mcp',
      serverName: 'Payments',
      bindingMessage: 'BLUE-42',
    });
    expect(toolTitle(ciba)).toBe('Send a payment');
    expect(toolTitle({ ...ciba, authorization_details: [{ locations: 7 }] })).toBe('Not this one');
    expect(directRequest({ ...ciba, authorization_details: [{ locations: 7 }] })?.serverUri).toBeNull();
    expect(
      directRequest({
        requested_via: 'gateway',
        binding_message: null,
        authorization_details: null,
        mcp_server_display_name: null,
      }),
    ).toBeNull();
  });

  it('keeps words that are not text as context', () => {
    expect(requestContext({ reason: { text: 'x' }, tool_title: '' })).toEqual({
      reason: null,
      title: null,
      description: null,
      rest: { reason: { text: 'x' }, tool_title: '' },
    });
  });
});

describe('the order of pending approvals', () => {
  it('critical first, then medium, unstated and low; newest first within each', () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 10, minute)).toISOString();
    const items = [
      { id: 'low-new', risk_level: 'low' as const, created_at: at(9) },
      { id: 'critical-old', risk_level: 'critical' as const, created_at: at(1) },
      { id: 'none', risk_level: null, created_at: at(8) },
      { id: 'medium', risk_level: 'medium' as const, created_at: at(7) },
      { id: 'critical-new', risk_level: 'critical' as const, created_at: at(5) },
    ];
    expect(reviewOrder(items).map((item) => item.id)).toEqual([
      'critical-new',
      'critical-old',
      'medium',
      'none',
      'low-new',
    ]);
  });
});
