import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.data'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Deciders are pure: no I/O, no framework, no clock.
    files: ['src/commands/**/*.ts'],
    ignores: ['src/commands/**/handler*.ts', 'src/commands/shared/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['pg', 'express', 'kysely', '**/api/**', '**/projections/**', '**/workers/**', '**/db/**'] }],
    },
  },
);
