/**
 * Server-side rendering: one handlebars environment of its own (never the
 * global one), every `views/*.hbs` compiled once at start-up, pages rendered
 * inside `views/layout.hbs`. `{{ }}` escapes; the templates never use the
 * triple-stash except for the layout's already-rendered page body.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import { translate, type Lang } from './i18n.ts';

const VIEWS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'views');

const hbs = Handlebars.create();

function langOf(options: Handlebars.HelperOptions): Lang {
  return options.data?.root?.lang ?? 'fr';
}

/** `{{t "key" name=value}}`, or `{{t key params}}` with a params object (flash messages, errors). */
hbs.registerHelper('t', function (key: string, ...rest: unknown[]) {
  const options = rest.pop() as Handlebars.HelperOptions;
  const params = rest[0] && typeof rest[0] === 'object' ? (rest[0] as Record<string, unknown>) : {};
  return translate(langOf(options), key, { ...params, ...options.hash });
});
/** `{{tx "status." value}}`: a label whose key is built from a prefix and a value. */
hbs.registerHelper('tx', function (prefix: string, value: unknown, options: Handlebars.HelperOptions) {
  return translate(langOf(options), `${prefix}${String(value)}`, options.hash);
});
hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
hbs.registerHelper('includes', (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value));
/** A datetime as "2026-11-23 14:05:09 UTC" (unambiguous for every reader; no client-side time zone guessing). */
hbs.registerHelper('dt', (value: unknown) => {
  if (value === null || value === undefined || value === '') return '—';
  const d = value instanceof Date ? value : new Date(String(value));
  return Number.isNaN(d.getTime()) ? String(value) : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
});
/** The message of form field `name` in `errors` ([{ field, message }]), or ''. */
hbs.registerHelper('fieldError', (errors: unknown, name: string) =>
  Array.isArray(errors) ? (errors.find((e: { field: string }) => e.field === name || e.field.startsWith(`${name}.`) || e.field.startsWith(`${name}[`))?.message ?? '') : '',
);
hbs.registerHelper('or', (a: unknown, b: unknown) => (a === null || a === undefined || a === '' ? b : a));
hbs.registerHelper('join', (list: unknown, sep: unknown) => (Array.isArray(list) ? list.join(typeof sep === 'string' ? sep : ', ') : ''));

const templates = new Map<string, Handlebars.TemplateDelegate>();
for (const file of readdirSync(VIEWS)) {
  if (!file.endsWith('.hbs')) continue;
  const name = file.slice(0, -4);
  const source = readFileSync(path.join(VIEWS, file), 'utf8');
  if (name.startsWith('_')) hbs.registerPartial(name.slice(1), source);
  else templates.set(name, hbs.compile(source, { strict: false, noEscape: false }));
}

function template(name: string): Handlebars.TemplateDelegate {
  const t = templates.get(name);
  if (!t) throw new Error(`no dashboard view "${name}"`);
  return t;
}

/** The page `name` with `context`, inside the layout. */
export function renderPage(name: string, context: Record<string, unknown>): string {
  const body = template(name)(context);
  return template('layout')({ ...context, body });
}
