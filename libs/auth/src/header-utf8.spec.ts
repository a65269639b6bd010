import { describe, expect, it } from 'vitest';
import { decodeHeaderUtf8 } from './header-utf8';

/** What Node's HTTP parser hands over for these bytes: one character per byte. */
const asReceived = (bytes: Buffer): string => bytes.toString('latin1');

describe('decodeHeaderUtf8', () => {
  it('decodes the UTF-8 bytes of a header value', () => {
    expect(decodeHeaderUtf8(asReceived(Buffer.from('café', 'utf8')))).toBe('café');
    expect(decodeHeaderUtf8(asReceived(Buffer.from('Đorđe 名前 🙂', 'utf8')))).toBe('Đorđe 名前 🙂');
    expect(decodeHeaderUtf8('alice@example.com')).toBe('alice@example.com');
  });

  it('refuses bytes that are not UTF-8 (a Latin-1 é, a truncated sequence, an overlong encoding)', () => {
    expect(decodeHeaderUtf8(asReceived(Buffer.from([0x63, 0x61, 0x66, 0xe9])))).toBeUndefined();
    expect(decodeHeaderUtf8(asReceived(Buffer.from([0x61, 0xe2, 0x82])))).toBeUndefined();
    expect(decodeHeaderUtf8(asReceived(Buffer.from([0xc0, 0xaf])))).toBeUndefined();
  });
});
