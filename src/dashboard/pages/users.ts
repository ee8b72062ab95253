/**
 * Users of the account (owner only): list, create, disable, through
 * src/dashboard/users.ts, the code of `npm run admin -- user ...`.
 */
import type { Request, Response, Router } from 'express';
import type { Runtime } from '../../runtime.ts';
import { audit, field, flash, formErrors, notFoundPage, render, requireRole, userOf, seeOther } from '../context.ts';
import { createUser, disableUser, getUser, listUsers, ROLES } from '../users.ts';

async function page(rt: Runtime, req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) {
  const users = await listUsers(rt.database.db, userOf(res).account_id);
  return render(rt, req, res, 'users', { users: users.map((u) => ({ ...u, self: u.id === userOf(res).id })), roles: ROLES, values: { role: 'viewer' }, ...extra }, status);
}

export function userPages(router: Router, rt: Runtime): void {
  const owner = requireRole(rt, 'owner');
  router.get('/users', owner, (req, res) => page(rt, req, res));

  router.post('/users', owner, async (req, res) => {
    const values = { email: field(req.body, 'email'), role: field(req.body, 'role') };
    const password = typeof req.body?.password === 'string' ? (req.body.password as string) : '';
    let user;
    try {
      user = await createUser(rt.database.db, { accountId: userOf(res).account_id, ...values, password });
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return page(rt, req, res, { values, errors }, 400); // the password is never sent back
    }
    await audit(rt, res, 'user.created', user.id);
    flash(req, 'ok', 'users.created', { email: user.email });
    return seeOther(req, res, '/dashboard/users');
  });

  router.post('/users/:id/disable', owner, async (req, res) => {
    const target = await getUser(rt.database.db, String(req.params.id)).catch(() => null);
    if (!target || target.account_id !== userOf(res).account_id || target.id === userOf(res).id) return notFoundPage(rt)(req, res, () => {});
    await disableUser(rt.database.db, target.id);
    await audit(rt, res, 'user.disabled', target.id);
    flash(req, 'ok', 'users.disabled_done');
    return seeOther(req, res, '/dashboard/users');
  });
}
