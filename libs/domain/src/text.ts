/** Why a piece of text cannot be stored or shown as it is. */
export type TextProblem = 'control_characters' | 'lone_surrogates';

/* eslint-disable no-control-regex -- matching control characters is the point */
/** C0 controls, DEL and C1 controls. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/;
/** The same, except the tab and line breaks a multi-line description may hold. */
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/* eslint-enable no-control-regex */
/** A UTF-16 surrogate without its pair: no Unicode character, stored as U+FFFD by the database driver. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The rule for text a person typed (names, descriptions, client ids): no control
 * characters, where they have no meaning (NUL reaches PostgreSQL as `invalid byte sequence
 * 0x00`, a 500; the others are log and display injection), and valid Unicode. `lines`
 * allows the tab, CR and LF of a multi-line description.
 */
export function textProblem(value: string, options: { readonly lines?: boolean } = {}): TextProblem | undefined {
  if ((options.lines === true ? CONTROLS_BUT_LINES : CONTROLS).test(value)) return 'control_characters';
  if (LONE_SURROGATE.test(value)) return 'lone_surrogates';
  return undefined;
}
