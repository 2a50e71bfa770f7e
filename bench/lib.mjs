// Helpers the benchmarks share.
import fs from "node:fs";

/** RSS in bytes of process `root` (default: this one) and every descendant process (workerd, for Miniflare). */
export function treeRss(root = process.pid) {
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {}
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
    } catch {}
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}
