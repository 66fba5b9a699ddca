// `npm run imports`: the import graph of src/ by area, its circles, and the edges that break a rule.
import { area, circles, importGraph, violations } from './import-graph.js';

const graph = importGraph();
const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
const byArea = new Map<string, number>();
for (const [file, deps] of graph)
  for (const d of deps)
    if (area(d) !== area(file))
      byArea.set(`${area(file)} → ${area(d)}`, (byArea.get(`${area(file)} → ${area(d)}`) ?? 0) + 1);
process.stdout.write(`${graph.size} files, ${edges} imports\n\nbetween areas:\n`);
for (const [k, n] of [...byArea].sort()) process.stdout.write(`  ${k}  ${n}\n`);
const c = circles(graph);
process.stdout.write(`\ncircles: ${c.length}\n${c.map((s) => `  ${s.join(' ↔ ')}`).join('\n')}\n`);
const v = violations(graph);
process.stdout.write(`\nedges that break a rule: ${v.length}\n${v.map((s) => `  ${s}`).join('\n')}\n`);
