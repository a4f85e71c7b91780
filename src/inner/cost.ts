import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * CPU seconds used by the calling thread (Linux: /proc/thread-self/stat, so a job in a
 * worker thread is not charged for its neighbours). Falls back to the thread's
 * event-loop active time where /proc is unavailable.
 */
export function threadCpuSeconds(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is [0]; utime is field 14 overall → index 11 here.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return performance.eventLoopUtilization().active / 1000;
  }
}
