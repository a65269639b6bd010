// @ts-check
import eslint from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';

/**
 * Lib boundaries as allow-lists (docs/architecture.md): each lib may
 * import only the libs named here; every other lib and the apps are forbidden, so a new
 * lib is forbidden everywhere until it is placed. Type-only cycles, which import-x/no-cycle
 * skips, are caught by scripts/check-import-cycles.mjs (also run by `npm run lint`).
 */
const ALLOWED = {
  domain: [],
  config: ['domain'],
  // Metrics and tracing, usable by every lib that does work worth counting or tracing.
  telemetry: ['domain', 'config'],
  outbound: ['domain', 'config', 'telemetry'],
  // The activity ledger: its catalogue, builders, recording and read-side query; below persistence, which stores it.
  events: ['domain', 'config', 'telemetry'],
  persistence: ['domain', 'config', 'telemetry', 'events'],
  audit: ['domain', 'config', 'telemetry'],
  vault: ['domain', 'config', 'persistence', 'events', 'outbound', 'telemetry'],
  'oauth-server': ['domain', 'config', 'persistence', 'events', 'audit', 'vault', 'outbound', 'telemetry'],
  approvals: ['domain', 'config', 'persistence', 'events', 'audit', 'oauth-server', 'telemetry'],
  auth: ['domain', 'config', 'vault', 'oauth-server'],
  http: ['domain', 'config', 'auth', 'telemetry'],
  bootstrap: ['domain', 'config', 'persistence', 'auth', 'http', 'telemetry'],
  testing: ['domain', 'config', 'persistence', 'vault', 'http', 'bootstrap', 'telemetry'],
  // The webhook outbox's delivery worker (outbound HTTP, the sealed secrets, the outbox tables).
  webhooks: ['domain', 'config', 'persistence', 'outbound', 'vault', 'telemetry'],
  // The response and query classes both servers' APIs use (the apps never import each other).
  'api-shapes': ['events', 'http', 'persistence'],
};
const LIBS = readdirSync(new URL('./libs', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const APPS = readdirSync(new URL('./apps', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
for (const lib of LIBS)
  if (!(lib in ALLOWED)) throw new Error(`eslint.config.mjs: place libs/${lib} in ALLOWED (which libs may it import?)`);
const libZones = LIBS.map((lib) => ({
  target: `./libs/${lib}`,
  from: [
    ...LIBS.filter((other) => other !== lib && !ALLOWED[lib].includes(other)).map((other) => `./libs/${other}`),
    './apps',
  ],
  message: `libs/${lib} may import only: ${ALLOWED[lib].length > 0 ? ALLOWED[lib].map((l) => `@broker/${l}`).join(', ') : 'nothing of ours'}.`,
}));
/** apps/broker runs both servers in one process: the one place that names both apps. */
const COMPOSER = 'broker';
const appZones = APPS.map((app) => ({
  target: `./apps/${app}`,
  from: [
    ...(app === COMPOSER ? [] : APPS.filter((other) => other !== app).map((other) => `./apps/${other}`)),
    './libs/testing',
  ],
  message:
    app === COMPOSER
      ? 'apps/broker never imports libs/testing.'
      : 'apps never import each other (only apps/broker composes them) or libs/testing.',
}));

export default tseslint.config(
  {
    ignores: [
      'apps/console/src/api/user-api.d.ts',
      'apps/admin-console/src/api/admin-api.d.ts',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      'openapi/**',
      'bench/**/*.js',
      'bench/**/*.mjs',
      'test/**/*.mjs',
      'scripts/**/*.mjs',
      'examples/**/*.mjs',
      'eslint.config.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/internal-regex': '^@broker/',
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': ['error', { maxDepth: Infinity }],
      'import-x/no-self-import': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Only libs/config reads process.env: take it from BrokerConfig.',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@broker/*/src', '@broker/*/src/*', '@broker/*/*'],
              message: 'Reach a lib only through its index: @broker/<lib>.',
            },
            { group: ['**/libs/*/src/**'], message: 'Reach a lib only through @broker/<lib>.' },
          ],
        },
      ],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [...libZones, ...appZones],
        },
      ],
    },
  },
  {
    // The console (a React app in the browser): typed over its own tsconfig, the React hooks rules (the v7
    // recommended set: the rules of hooks, complete effect dependencies and the React Compiler's checks) as errors.
    files: ['apps/console/**/*.{ts,tsx,mts}'],
    ...reactHooks.configs.flat.recommended,
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: './apps/console/tsconfig.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './apps/console/tsconfig.json' })],
    },
    rules: {
      ...reactHooks.configs.flat.recommended.rules,
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // The admin console: the same rules over its own tsconfig.
    files: ['apps/admin-console/**/*.{ts,tsx,mts}'],
    ...reactHooks.configs.flat.recommended,
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: './apps/admin-console/tsconfig.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './apps/admin-console/tsconfig.json' })],
    },
    rules: {
      ...reactHooks.configs.flat.recommended.rules,
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    files: ['libs/config/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'libs/testing/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      'import-x/no-restricted-paths': 'off',
    },
  },
);
