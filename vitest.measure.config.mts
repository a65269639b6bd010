import { defineConfig } from 'vitest/config';
import base from './vitest.config.mts';

/** `npm run bench` measurements that need the TypeScript test helpers: they print numbers and assert nothing. */
export default defineConfig({ ...base, test: { ...base.test, include: ['bench/**/*.measure.ts'], globalSetup: [], testTimeout: 300_000 } });
