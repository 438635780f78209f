#!/usr/bin/env node
// Runs the whole suite (`pnpm test`) beside 2 × cores CPU burners, which it starts first and stops
// whatever the suite's end: a machine busy with other work, made on purpose. A suite green here is
// green for whoever runs it on a busy machine. Prints the wall time and the load it ran under.
//
//   node scripts/test-stress.mjs [burners]      (pnpm test:stress)
import { spawn } from 'node:child_process';
import os from 'node:os';

const count = Number(process.argv[2] ?? 2 * os.availableParallelism());
const burners = Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
const stop = () => {
  for (const burner of burners) burner.kill('SIGKILL');
};
process.on('exit', stop);

const started = performance.now();
const loads = [];
const sampler = setInterval(() => loads.push(os.loadavg()[0]), 10_000);
const suite = spawn('pnpm', ['test'], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => suite.kill(signal));
suite.on('exit', (code, signal) => {
  clearInterval(sampler);
  stop();
  const minutes = (performance.now() - started) / 60_000;
  const mean = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : os.loadavg()[0];
  console.log(
    `test:stress: ${code === 0 ? 'green' : 'red'} in ${minutes.toFixed(1)} min beside ${count} CPU burners (mean load ${mean.toFixed(1)} on ${os.availableParallelism()} cores)`,
  );
  process.exit(code ?? (signal ? 1 : 0));
});
