import { describe, expect, it } from 'vitest';
import { requestContext, reviewOrder, toolTitle } from './request-context';

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
