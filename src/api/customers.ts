/**
 * /customers (reference: Customers endpoints; docs/api-decisions.md "Representations", "Status codes", "Lists", "Customers").
 * Reads come from the customers read model; writes run a command handler and
 * answer through answerAfterWrite (src/api/answer.ts; read your writes, docs/api-decisions.md "Beyond the reference"), then answer from the read model like a GET.
 */
import { archiveCustomer, createCustomer, iceClaims, updateCustomer, type CustomerResult, type CustomerWrite } from '../commands/customer/handler.ts';
import { getCustomer, listCustomers, type CustomerListQuery } from '../queries/customers.ts';
import { notFound } from '../shared/errors.ts';
import { answerAfterWrite, type WrittenResource } from './answer.ts';
import { commandInput } from './command-input.ts';
import { validateCustomerPatch, validateNewCustomer } from '../commands/customer/validate.ts';
import { asRecord, fieldErrorsOf, withTakenClaims } from './body-check.ts';
import { wellFormedIce } from '../commands/field-rules.ts';
import type { RequestContext, RouteSpec } from './route.ts';
import { createCustomerBody, customerSchema, listCustomersQuery, updateCustomerBody } from './schemas/customers.ts';

function organizationOf(ctx: RequestContext): string {
  // Organization-audience routes always run with one (the pipeline checked the key).
  return ctx.organizationId!;
}

function write(ctx: RequestContext): CustomerWrite {
  return { ...commandInput(ctx), organizationId: organizationOf(ctx) };
}

/** How a customer write answers (src/api/answer.ts): customer reads come from the customers projector. */
const writtenCustomer: WrittenResource<CustomerResult> = {
  name: 'customer',
  projectors: ['customers'],
  position: (result) => result.position,
  version: (result) => result.state.customer!.version,
  async read(ctx, result) {
    const stored = await getCustomer(ctx.rt.database.pool, organizationOf(ctx), result.state.customer!.id);
    return stored && { data: stored, version: stored.version };
  },
  decided: (_ctx, result) => ({ data: result.state.customer!, version: result.state.customer!.version }),
};

const answer = (ctx: RequestContext, result: CustomerResult, status = 200) => answerAfterWrite(ctx, writtenCustomer, result, status);

export const customerRoutes: RouteSpec[] = [
  {
    operationId: 'listCustomers',
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
    operationId: 'getCustomer',
    method: 'get',
    path: '/customers/:id',
    summary: 'Read a customer',
    tag: 'Customers',
    scope: 'customers:read',
    audience: 'organization',
    response: customerSchema,
    async handler(ctx, { params }) {
      const customer = await getCustomer(ctx.rt.database.pool, organizationOf(ctx), params.id);
      if (!customer) throw notFound('Customer');
      return { data: customer, version: customer.version };
    },
  },
  {
    operationId: 'createCustomer',
    method: 'post',
    path: '/customers',
    summary: 'Create a customer',
    tag: 'Customers',
    scope: 'customers:write',
    audience: 'organization',
    body: createCustomerBody,
    check: (ctx, body) => withTakenClaims(ctx, fieldErrorsOf(() => validateNewCustomer(asRecord(body))), iceClaims(ctx.organizationId!, wellFormedIce(asRecord(body).ice)), null),
    successStatus: 201,
    location: '/customers/:id',
    response: customerSchema,
    async handler(ctx, { body }) {
      return answer(ctx, await createCustomer(write(ctx), ctx.newId('customer'), body), 201);
    },
  },
  {
    operationId: 'updateCustomer',
    method: 'patch',
    path: '/customers/:id',
    summary: 'Update a customer (partial; status active unarchives)',
    tag: 'Customers',
    scope: 'customers:write',
    audience: 'organization',
    body: updateCustomerBody,
    check: (ctx, body) =>
      withTakenClaims(ctx, fieldErrorsOf(() => validateCustomerPatch(asRecord(body))), iceClaims(ctx.organizationId!, wellFormedIce(asRecord(body).ice)), ctx.params.id ?? null),
    response: customerSchema,
    errors: ['VERSION_CONFLICT'],
    changesCustomer: true,
    async handler(ctx, { params, body }) {
      return answer(ctx, await updateCustomer(write(ctx), params.id, body));
    },
  },
  {
    operationId: 'archiveCustomer',
    method: 'delete',
    path: '/customers/:id',
    summary: 'Archive a customer (soft delete; answers the archived customer)',
    tag: 'Customers',
    scope: 'customers:delete',
    audience: 'organization',
    response: customerSchema,
    errors: ['ALREADY_ARCHIVED', 'VERSION_CONFLICT'],
    changesCustomer: true,
    async handler(ctx, { params }) {
      return answer(ctx, await archiveCustomer(write(ctx), params.id));
    },
  },
];
