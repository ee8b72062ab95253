/**
 * Memory (MiB) of a process and every process below it (a server and its
 * Chromium), as PSS: pages shared between the processes (Chromium's share
 * one binary and many mappings) counted once, shared out, which summed RSS
 * would count in every process. Summed RSS is given beside it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export interface TreeMemory {
  /** The whole tree, PSS. */
  pss: number;
  /** The root process alone, PSS. */
  root: number;
  /** The root process alone, RSS (shares nothing out: another process mapping the same binary lowers its PSS, not this). */
  rootRss: number;
  /** The whole tree, RSS summed. */
  rss: number;
  processes: number;
  /** Each process: its name (Chromium's: its --type) and PSS, largest first. */
  each: { name: string; pss: number }[];
}

function processName(pid: number, rootPid: number): string {
  if (pid === rootPid) return 'root';
  // Chromium rewrites its argv as one space-separated string.
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
  const type = argv.find((a) => a.startsWith('--type='))?.slice('--type='.length);
  const sub = argv.find((a) => a.startsWith('--utility-sub-type='))?.split('.').pop();
  return type ? `${type}${sub ? ` (${sub})` : ''}` : path.basename(argv[0] ?? String(pid));
}

export function treeMemoryMiB(rootPid: number): TreeMemory {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => pid === rootPid || (pid > 1 && parent.has(pid) && inTree(parent.get(pid)!));
  const kib = { pss: 0, root: 0, rootRss: 0, rss: 0, processes: 0 };
  const each: { name: string; pss: number }[] = [];
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const pss = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      kib.pss += pss;
      const rss = Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      if (pid === rootPid) [kib.root, kib.rootRss] = [pss, rss];
      kib.rss += rss;
      kib.processes++;
      each.push({ name: processName(pid, rootPid), pss: pss / 1024 });
    } catch {
      // exited meanwhile
    }
  }
  each.sort((a, b) => b.pss - a.pss);
  return { pss: kib.pss / 1024, root: kib.root / 1024, rootRss: kib.rootRss / 1024, rss: kib.rss / 1024, processes: kib.processes, each };
}
