/**
 * The lint rules that keep dependencies pointing one way
 * (docs/architecture.md, "Dependency direction"), run through ESLint with
 * the project's own configuration on sources placed in src/.
 */
import { expect } from 'chai';
import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function problems(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath: path.join(repoRoot, file) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint: dependency direction', function () {
  this.timeout(120_000);

  it('commands/ may not import api, queries, projections, workers, pg or express', async () => {
    for (const source of ['../../api/route.ts', '../../queries/customers.ts', '../../projections/runner.ts', '../../workers/worker.ts', 'pg', 'express']) {
      const found = await problems('src/commands/invoice/handlers-probe.ts', `import x from '${source}';`);
      expect(found.some((p) => p.startsWith('no-restricted-imports')), `${source}: ${found.join('; ')}`).to.equal(true);
    }
  });

  it('queries, accounts, projections, eventstore and db may not import api/', async () => {
    for (const folder of ['queries', 'accounts', 'projections', 'eventstore', 'db']) {
      const found = await problems(`src/${folder}/probe.ts`, "import x from '../api/route.ts';");
      expect(found.some((p) => p.startsWith('no-restricted-imports')), `${folder}: ${found.join('; ')}`).to.equal(true);
    }
  });

  it('an import that closes a cycle between top-level folders is refused, naming the cycle', async () => {
    const found = await problems('src/projections/probe.ts', "import x from '../runtime.ts';");
    expect(found).to.include('layers/no-folder-cycles: Import cycle between parts of src/: projections -> runtime.ts -> projections. Dependencies point one way (docs/architecture.md).');
  });

  it('imports in the allowed direction pass', async () => {
    expect(await problems('src/api/probe.ts', "import x from '../queries/customers.ts';")).to.deep.equal([]);
    expect(await problems('src/commands/invoice/handlers-probe.ts', "import x from '../../eventstore/types.ts';")).to.deep.equal([]);
  });
});
