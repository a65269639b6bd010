const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// eslint-disable-next-line no-control-regex -- every ASCII byte, controls included, decodes to itself
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A header value as the client sent it, in UTF-8. Node's parser maps each header byte
 * to one character (Latin-1), so `café` arrives as `cafÃ©`; the bytes are recovered and
 * decoded strictly. Undefined when they are not valid UTF-8.
 */
export function decodeHeaderUtf8(latin1: string): string | undefined {
  if (ASCII.test(latin1)) return latin1;
  try {
    return UTF8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return undefined;
  }
}
