/**
 * The webhook benchmark's receiver, in its own process (its own core, as a
 * customer's server would be): answers every POST 200 "ok" over keep-alive,
 * counts requests, prints its port once, and answers "count" over IPC.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let count = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    count++;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('message', (msg) => {
  if (msg === 'count') process.send?.({ count });
  if (msg === 'reset') count = 0;
});
process.on('disconnect', () => process.exit(0));
