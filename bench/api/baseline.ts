/**
 * Child process of `npm run bench -- api`: the baseline, a minimal express
 * handler doing one indexed PostgreSQL read (the organization by primary key)
 * on the same database, with a pool of the API's size, no auth, no checks.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createPool } from '../../src/db/database.ts';

const pool = createPool(process.env.DATABASE_URL!, 30, 'bench-baseline');
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/baseline/organizations/:id', async (req, res, next) => {
  try {
    const { rows } = await pool.query('select * from organizations where id = $1', [req.params.id]);
    if (!rows[0]) return void res.status(404).json({ success: false });
    res.json({ success: true, data: rows[0] });
  } catch (err) {
    next(err);
  }
});
const server = app.listen(0, () => {
  process.send!({ url: `http://localhost:${(server.address() as AddressInfo).port}` });
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
