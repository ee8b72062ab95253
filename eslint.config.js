import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { noFolderCycles } from './eslint/no-folder-cycles.js';

// Dependency direction (docs/architecture.md): api -> commands/queries -> event store/db.
const notFromCommands = ['pg', 'express', '**/api/**', '**/queries/**', '**/projections/**', '**/workers/**'];
const notFromBelowApi = ['**/api/**'];

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
    // No import cycle between the top-level folders (and files) of src/.
    files: ['src/**/*.ts'],
    plugins: { layers: { rules: { 'no-folder-cycles': noFolderCycles } } },
    rules: { 'layers/no-folder-cycles': 'error' },
  },
  {
    // The write side knows nothing of HTTP, read models or workers (handlers and the runner).
    files: ['src/commands/**/handler*.ts', 'src/commands/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: notFromCommands }] },
  },
  {
    // Deciders and everything else of the write side are pure: no I/O, no framework, no clock.
    files: ['src/commands/**/*.ts'],
    ignores: ['src/commands/**/handler*.ts', 'src/commands/shared/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...notFromCommands, 'kysely', '**/db/**'] }] },
  },
  {
    // Below the API: nothing imports the HTTP layer.
    files: ['src/queries/**/*.ts', 'src/accounts/**/*.ts', 'src/projections/**/*.ts', 'src/eventstore/**/*.ts', 'src/db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: notFromBelowApi }] },
  },
);
