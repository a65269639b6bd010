// @ts-check
import eslint from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const layer = (target, from, message) => ({ target, from, message });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'openapi/**', 'bench/**/*.js', 'bench/**/*.mjs', 'test/**/*.mjs', 'eslint.config.mjs'] },
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
        { object: 'process', property: 'env', message: 'Only libs/config reads process.env: take it from BrokerConfig.' },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@broker/*/src', '@broker/*/src/*', '@broker/*/*'], message: 'Reach a lib only through its index: @broker/<lib>.' },
            { group: ['**/libs/*/src/**'], message: 'Reach a lib only through @broker/<lib>.' },
          ],
        },
      ],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            layer('./libs/domain', ['./libs/config', './libs/persistence', './libs/auth', './libs/http', './libs/audit', './libs/approvals', './libs/testing', './apps'], 'domain imports nothing of ours.'),
            layer('./libs/config', ['./libs/domain', './libs/persistence', './libs/auth', './libs/http', './libs/audit', './libs/approvals', './libs/testing', './apps'], 'config is the bottom layer.'),
            layer('./libs/persistence', ['./libs/auth', './libs/http', './libs/audit', './libs/approvals', './libs/testing', './apps'], 'persistence may import domain and config only.'),
            layer('./libs/vault', ['./libs/oauth-server', './libs/auth', './libs/http', './libs/audit', './libs/approvals', './libs/testing', './apps'], 'vault sits above persistence only.'),
            layer('./libs/oauth-server', ['./libs/auth', './libs/http', './libs/approvals', './libs/testing', './apps'], 'oauth-server never imports auth, http, approvals or the apps.'),
            layer('./libs/approvals', ['./libs/auth', './libs/http', './libs/testing', './apps'], 'approvals sits above persistence and oauth-server; never auth, http or the apps.'),
            layer('./libs/auth', ['./libs/http', './libs/approvals', './libs/testing', './apps'], 'auth never imports http or the apps.'),
            layer('./libs/audit', ['./libs/http', './libs/auth', './libs/approvals', './libs/testing', './apps'], 'audit sits below http and auth.'),
            layer('./libs/http', ['./libs/testing', './apps'], 'http never imports the apps.'),
            layer('./apps/user-api', ['./apps/admin-api', './apps/broker', './libs/testing'], 'apps never import each other.'),
            layer('./apps/admin-api', ['./apps/user-api', './apps/broker', './libs/testing'], 'apps never import each other.'),
          ],
        },
      ],
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
