/**
 * ESLint rule: no import cycle between the top-level parts of src/ (each
 * folder, and each file directly in src/, is one node). Dependencies point
 * one way (docs/architecture.md, "Dependency direction"): an import from
 * part A to part B is refused when B already reaches A.
 *
 * The graph of every part is read once per lint run from the sources
 * (relative `import ... from`, `export ... from` and `import()`), so a new
 * folder is covered without any configuration.
 */
import fs from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function partOf(srcDir, file) {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep)[0];
}

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const graphs = new Map();

/** part -> Set of parts it imports (migrations are frozen history and left out). */
function graphOf(srcDir) {
  let graph = graphs.get(srcDir);
  if (graph) return graph;
  graph = new Map();
  for (const file of walk(srcDir, [])) {
    if (file.includes(`${path.sep}migrations${path.sep}`)) continue;
    const from = partOf(srcDir, file);
    for (const match of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = partOf(srcDir, path.resolve(path.dirname(file), match[1]));
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
    }
  }
  graphs.set(srcDir, graph);
  return graph;
}

/** A path from `start` to `goal` in the graph, or null. */
function pathBetween(graph, start, goal) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === goal) {
      const route = [];
      for (let n = goal; n !== null; n = previous.get(n)) route.unshift(n);
      return route;
    }
    for (const next of graph.get(node) ?? []) {
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return null;
}

export const noFolderCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'no import cycle between the top-level folders and files of src/' },
    schema: [],
  },
  create(context) {
    const filename = context.filename;
    const srcDir = path.join(context.cwd, 'src');
    const from = partOf(srcDir, filename);
    if (!from || filename.includes(`${path.sep}migrations${path.sep}`)) return {};
    const graph = graphOf(srcDir);
    function check(node) {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = partOf(srcDir, path.resolve(path.dirname(filename), source));
      if (!to || to === from) return;
      const back = pathBetween(graph, to, from);
      if (back) {
        context.report({
          node: node.source,
          message: `Import cycle between parts of src/: ${from} -> ${back.join(' -> ')}. Dependencies point one way (docs/architecture.md).`,
        });
      }
    }
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
