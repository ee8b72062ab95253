/**
 * The OpenAPI document passes Redocly's linter (recommended-strict, plus the
 * project's rules in redocly.yaml: camelCase operationIds, object schemas
 * that describe their properties) with no error and no warning.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildOpenApi } from '../../src/api/openapi.ts';
import { processParts } from '../../src/main.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

function redoclyLint(file: string): Promise<LintReport> {
  const cli = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
  const args = [cli, 'lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'];
  // No telemetry or update check: CI reaches only the npm registry.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: root, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const start = stdout.indexOf('{');
      if (start < 0) return reject(new Error(`redocly printed no report (${err?.message ?? ''}): ${stderr.slice(0, 2000)}`));
      resolve(JSON.parse(stdout.slice(start)) as LintReport);
    });
  });
}

describe('OpenAPI document: Redocly lint', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has 0 errors and 0 warnings', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(buildOpenApi(processParts.routes)));
    const report = await redoclyLint(file);
    const problems = report.problems.slice(0, 20).map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(report.totals.errors, problems.join('\n')).to.equal(0);
    expect(report.totals.warnings, problems.join('\n')).to.equal(0);
  });

  it('finds a problem when there is one (the rules are live)', async () => {
    const doc = buildOpenApi(processParts.routes) as any;
    doc.paths['/invoices'].get.operationId = 'list_invoices';
    doc.components.schemas.Invoice.properties.items.items = { type: 'object' };
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(doc));
    const report = await redoclyLint(file);
    expect(report.problems.map((p) => p.ruleId)).to.include.members(['rule/operation-id-camel-case', 'rule/schema-object-has-properties']);
  });
});
