/**
 * Preloaded into a benchmarked service (`node --import bench/profile-probe.mjs …`, with an IPC
 * channel): profiles the service's main thread between two messages, so a profile holds the measured
 * load and not the start-up. `{ type: 'profile', id, action: 'start' }` starts V8's sampling profiler
 * (through an in-process inspector session, as `node --cpu-prof` does from start to exit);
 * `{ type: 'profile', id, action: 'stop', file }` stops it and writes the profile (the `.cpuprofile`
 * format of Chrome DevTools and speedscope) to `file`. Each is answered `{ type: 'profile', id, error }`.
 * The service's code is unchanged; the channel is unreferenced, so it never keeps the process alive.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

if (process.send) {
  const session = new Session();
  session.connect();
  const post = (method, params = {}) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  process.on('message', (message) => {
    if (message?.type !== 'profile') return;
    const answer = (error) =>
      process.send?.({ type: 'profile', id: message.id, error: error ? String(error) : null });
    const work =
      message.action === 'start'
        ? post('Profiler.enable').then(() => post('Profiler.start'))
        : post('Profiler.stop').then(({ profile }) => writeFileSync(message.file, JSON.stringify(profile)));
    work.then(() => answer(null), answer);
  });
  process.channel?.unref();
}
