/**
 * GET /invoices/{id}/pdf and GET /invoices/{id}/xml (reference: Invoices;
 * docs/api-decisions.md "Invoice lifecycle", "Status codes"): raw bodies with their media types and
 * Content-Disposition, for finalized, sent, paid and void invoices;
 * PDF_NOT_AVAILABLE / XML_NOT_AVAILABLE for a draft; another
 * organization's invoice is a 404. docs/documents.md.
 */
import { documentsFor } from '../documents/for-runtime.ts';
import { DOCUMENT_LOCALES, type DocumentLocale } from '../documents/locale.ts';
import type { RequestContext, RouteSpec } from './route.ts';

const organizationOf = (ctx: RequestContext) => ctx.organizationId!; // organization routes always have one

const pdfQuery = {
  type: 'object',
  properties: { locale: { type: 'string', enum: [...DOCUMENT_LOCALES], default: 'fr', description: 'Language of the document.' } },
};

export const documentRoutes: RouteSpec[] = [
  {
    operationId: 'getInvoicePdf',
    method: 'get',
    path: '/invoices/:id/pdf',
    summary: 'The invoice as a PDF (fr, en or ar), once finalized',
    tag: 'Invoices',
    audience: 'organization',
    scope: 'invoices:export',
    query: pdfQuery,
    produces: 'application/pdf',
    errors: ['PDF_NOT_AVAILABLE', 'PDF_RENDERER_UNAVAILABLE'],
    async handler(ctx, { params, query }: { params: Record<string, string>; query: { locale: DocumentLocale } }) {
      const file = await documentsFor(ctx.rt).pdf(organizationOf(ctx), params.id, query.locale);
      return { file: { contentType: 'application/pdf', ...file } };
    },
  },
  {
    operationId: 'getInvoiceXml',
    method: 'get',
    path: '/invoices/:id/xml',
    summary: 'The invoice as UBL 2.1 XML (EN 16931), once finalized',
    tag: 'Invoices',
    audience: 'organization',
    scope: 'invoices:export',
    produces: 'application/xml',
    errors: ['XML_NOT_AVAILABLE'],
    async handler(ctx, { params }) {
      const file = await documentsFor(ctx.rt).xml(organizationOf(ctx), params.id);
      return { file: { contentType: 'application/xml; charset=utf-8', ...file } };
    },
  },
];
