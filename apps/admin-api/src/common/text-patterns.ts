/**
 * The broker's text rules (`IsPlainText`, `IsScopeToken` of `@broker/http`) as JSON Schema
 * patterns, for the document: what the validators refuse, the document does not allow.
 * (Unpaired surrogates, also refused, have no pattern: JSON text cannot carry them validly.)
 */
export const TEXT_PATTERNS = {
  /** No control characters (C0, DEL, C1). */
  line: '^[^\\u0000-\\u001F\\u007F-\\u009F]*$',
  /** As `line`, but the tab and line breaks of a multi-line description are allowed. */
  lines: '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$',
  /** RFC 6749 §3.3 scope token: printable ASCII except space, `"` and `\`, 1-255 characters. */
  scope: '^[\\u0021\\u0023-\\u005B\\u005D-\\u007E]{1,255}$',
} as const;
