import { Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { keepNestLogger } from './nest-logger';

function staticLogger(): unknown {
  return (Logger as unknown as { staticInstanceRef?: unknown }).staticInstanceRef;
}

@Module({})
class EmptyModule {}

describe('keepNestLogger', () => {
  it("puts back Nest's static logger that compiling a testing module replaced", async () => {
    const before = staticLogger();
    const restore = keepNestLogger();
    const moduleRef = await Test.createTestingModule({ imports: [EmptyModule] }).compile();
    expect(staticLogger()).not.toBe(before);
    await moduleRef.close();
    restore();
    expect(staticLogger()).toBe(before);
  });
});
