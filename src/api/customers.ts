/**
 * /customers (reference: Customers endpoints; CONTRACT sections 5, 6, 9, 10).
 * Reads come from the customers read model; writes run a command handler,
 * wait until the projectors have passed the appended position (read your
 * writes, CONTRACT section 13), then answer from the read model like a GET.
 */
import { archiveCustomer, createCustomer, updateCustomer, type CustomerResult, type CustomerWrite } from '../commands/customer/handler.ts';
import { getCustomer, listCustomers, type CustomerListQuery } from '../queries/customers.ts';
import { notFound } from '../shared/errors.ts';
import type { JsonReply, RequestContext, RouteSpec } from './route.ts';
import { createCustomerBody, customerSchema, listCustomersQuery, updateCustomerBody } from './schemas/customers.ts';

function organizationOf(ctx: RequestContext): string {
  // Organization-audience routes always run with one (the pipeline checked the key).
  return ctx.organizationId!;
}

function write(ctx: RequestContext): CustomerWrite {
  return {
    store: ctx.rt.store,
    organizationId: organizationOf(ctx),
    metadata: ctx.metadata(),
    ifMatch: ctx.ifMatch,
    commandId: ctx.idempotencySeed ? ctx.newId('command') : undefined,
  };
}

/**
 * The response of a write: the read-model row once the projectors caught up.
 * If they do not within the wait (overloaded or stopped projector), the write
 * has happened all the same: answer the customer as the command decided it,
 * which is the very snapshot the projector will store, rather than an error
 * that would invite a duplicate retry.
 */
async function answer(ctx: RequestContext, result: CustomerResult, status = 200): Promise<JsonReply> {
  const decided = result.state.customer!;
  if (result.position !== null && !(await ctx.rt.progress.waitFor(result.position))) {
    ctx.rt.logger.warn({ request_id: ctx.requestId, position: result.position }, 'customers: projectors behind, answering the decided state');
    return { status, data: decided, version: decided.version };
  }
  const stored = await getCustomer(ctx.rt.database.db, organizationOf(ctx), decided.id);
  const data = stored && stored.version >= decided.version ? stored : decided;
  return { status, data, version: data.version };
}

export const customerRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: '/customers',
    summary: 'List customers',
    tag: 'Customers',
    scope: 'customers:read',
    audience: 'organization',
    query: listCustomersQuery,
    response: { type: 'array', items: customerSchema },
    async handler(ctx, { query }: { query: CustomerListQuery }) {
      const { data, total } = await listCustomers(ctx.rt.database.db, organizationOf(ctx), query);
      return { data, pagination: { total, page: query.page, perPage: query.per_page, totalPages: Math.ceil(total / query.per_page) } };
    },
  },
  {
    method: 'get',
    path: '/customers/:id',
    summary: 'Read a customer',
    tag: 'Customers',
    scope: 'customers:read',
    audience: 'organization',
    response: customerSchema,
    async handler(ctx, { params }) {
      const customer = await getCustomer(ctx.rt.database.db, organizationOf(ctx), params.id);
      if (!customer) throw notFound('Customer');
      return { data: customer, version: customer.version };
    },
  },
  {
    method: 'post',
    path: '/customers',
    summary: 'Create a customer',
    tag: 'Customers',
    scope: 'customers:write',
    audience: 'organization',
    body: createCustomerBody,
    successStatus: 201,
    response: customerSchema,
    async handler(ctx, { body }) {
      return answer(ctx, await createCustomer(write(ctx), ctx.newId('customer'), body), 201);
    },
  },
  {
    method: 'patch',
    path: '/customers/:id',
    summary: 'Update a customer (partial; status active unarchives)',
    tag: 'Customers',
    scope: 'customers:write',
    audience: 'organization',
    body: updateCustomerBody,
    response: customerSchema,
    errors: ['VERSION_CONFLICT'],
    async handler(ctx, { params, body }) {
      return answer(ctx, await updateCustomer(write(ctx), params.id, body));
    },
  },
  {
    method: 'delete',
    path: '/customers/:id',
    summary: 'Archive a customer (soft delete; answers the archived customer)',
    tag: 'Customers',
    scope: 'customers:delete',
    audience: 'organization',
    response: customerSchema,
    errors: ['ALREADY_ARCHIVED', 'VERSION_CONFLICT'],
    async handler(ctx, { params }) {
      return answer(ctx, await archiveCustomer(write(ctx), params.id));
    },
  },
];
