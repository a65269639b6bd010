import { describe, expect, it } from 'vitest';
import { textProblem } from './text';

describe('textProblem', () => {
  it('accepts ordinary text in any script', () => {
    for (const value of ['Mail Agent', 'Zoë’s “calendar”', '日本語のエージェント', 'emoji 🚀 pair', ''])
      expect(textProblem(value), value).toBeUndefined();
  });

  it('refuses C0 controls, DEL and C1 controls', () => {
    for (const value of [
      'a\u0000b',
      'tab\tinside',
      'line\nbreak',
      'bell\u0007',
      'esc\u001b[31m',
      'del\u007f',
      'nel\u0085',
      'csi\u009b',
    ]) {
      expect(textProblem(value), JSON.stringify(value)).toBe('control_characters');
    }
  });

  it('allows only tab, CR and LF in multi-line text', () => {
    expect(textProblem('First\r\n\tSecond\n', { lines: true })).toBeUndefined();
    for (const value of ['a\u0000b', 'vt\u000b', 'ff\u000c', 'esc\u001b', 'del\u007f', 'nel\u0085'])
      expect(textProblem(value, { lines: true }), JSON.stringify(value)).toBe('control_characters');
  });

  it('refuses unpaired surrogates but not surrogate pairs', () => {
    expect(textProblem('lone \ud800')).toBe('lone_surrogates');
    expect(textProblem('\udc00 first')).toBe('lone_surrogates');
    expect(textProblem('pair \ud83d\ude80')).toBeUndefined();
  });
});
