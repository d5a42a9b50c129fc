// Generates src/lib/events.gen.ts, the event stream's wire types, from the OpenAPI document
// of nomos-http (crates/nomos-http/openapi.json): `EventRecordDto` and every schema it refers
// to, and `EVENT_KINDS`, the `type` of each `EventDto` variant.
//
//   node scripts/wire-types.mjs          writes the file
//   node scripts/wire-types.mjs --check  fails when the committed file is not what it writes
//
// Only the JSON Schema the document uses is understood (objects, string enums, `oneOf`,
// arrays, `$ref`, nullable types); anything else is an error naming the schema, so a new
// shape never turns silently into `unknown`.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = join(web, '..', 'crates', 'nomos-http', 'openapi.json');
export const OUTPUT = join(web, 'src', 'lib', 'events.gen.ts');
const ROOTS = ['EventRecordDto'];

/** @typedef {Record<string, any>} Schema  A JSON Schema object of the document. */

/**
 * The TypeScript of the schemas reachable from ROOTS in `document`.
 * @param {any} document the parsed OpenAPI document
 * @returns {string}
 */
export function generate(document) {
  /** @type {Record<string, Schema>} */
  const schemas = document?.components?.schemas ?? {};
  const names = reachable(schemas, ROOTS);
  const out = [
    '// Generated from crates/nomos-http/openapi.json by web/scripts/wire-types.mjs: do not edit.',
    '// Run `npm --prefix web run generate` after `UPDATE_OPENAPI=1 cargo test -p nomos-http --test it openapi`.',
    '',
  ];
  for (const name of names) {
    const schema = schemas[name];
    out.push(...doc(schema.description, ''));
    if (isObject(schema)) {
      out.push(`export interface ${name} ${objectType(schema, '', name)}`);
    } else {
      const type = typeOf(schema, '', name);
      out.push(`export type ${name} =${type.startsWith('\n') ? '' : ' '}${type};`);
    }
    out.push('');
  }
  out.push('/** Every durable event kind the server sends (`DomainEvent::kind`, the SSE `event:` field). */');
  out.push(`export const EVENT_KINDS = [\n${eventKinds(schemas).map((k) => `  '${k}',`).join('\n')}\n] as const;`);
  out.push('');
  out.push('/** A durable event kind. */');
  out.push('export type EventKind = (typeof EVENT_KINDS)[number];');
  out.push('');
  out.push('/** The event of one kind. */');
  out.push('export type EventOf<K extends EventKind> = Extract<EventDto, { type: K }>;');
  out.push('');
  return out.join('\n');
}

/**
 * The `type` of each `EventDto` variant, in the document's order.
 * @param {Record<string, Schema>} schemas
 * @returns {string[]}
 */
export function eventKinds(schemas) {
  const variants = schemas.EventDto?.oneOf;
  if (!Array.isArray(variants)) throw new Error('openapi.json: EventDto is not a oneOf');
  return variants.map((/** @type {Schema} */ variant, /** @type {number} */ i) => {
    const kinds = variant?.properties?.type?.enum;
    if (!Array.isArray(kinds) || kinds.length !== 1) throw new Error(`openapi.json: EventDto variant ${i} has no single type`);
    return kinds[0];
  });
}

/**
 * @param {Record<string, Schema>} schemas
 * @param {string[]} roots
 * @returns {string[]}
 */
function reachable(schemas, roots) {
  /** @type {Set<string>} */
  const seen = new Set();
  /** @param {string} name */
  const visit = (name) => {
    if (seen.has(name)) return;
    if (!schemas[name]) throw new Error(`openapi.json: no schema ${name}`);
    seen.add(name);
    for (const ref of refs(schemas[name])) visit(ref);
  };
  roots.forEach(visit);
  return [...seen].sort();
}

/**
 * @param {unknown} value
 * @returns {string[]}
 */
function refs(value) {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (value === null || typeof value !== 'object') return [];
  const ref = /** @type {Schema} */ (value).$ref;
  const own = typeof ref === 'string' ? [refName(ref)] : [];
  return [...own, ...Object.values(value).flatMap(refs)];
}

/** @param {string} ref */
function refName(ref) {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`openapi.json: unsupported $ref ${ref}`);
  return ref.slice(prefix.length);
}

/** @param {Schema} schema */
function isObject(schema) {
  return schema.type === 'object' && schema.properties !== undefined;
}

/**
 * @param {unknown} description
 * @param {string} indent
 * @returns {string[]}
 */
function doc(description, indent) {
  if (!description) return [];
  const lines = String(description).split('\n');
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((line) => `${indent} * ${line}`.trimEnd()), `${indent} */`];
}

/**
 * @param {Schema} schema
 * @param {string} indent
 * @param {string} where
 * @returns {string}
 */
function objectType(schema, indent, where) {
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = ['{'];
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    lines.push(...doc(property.description, inner));
    const optional = required.has(key) ? '' : '?';
    lines.push(`${inner}${key}${optional}: ${typeOf(property, inner, `${where}.${key}`)};`);
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}

/**
 * @param {Schema} schema
 * @param {string} indent
 * @param {string} where
 * @returns {string}
 */
function typeOf(schema, indent, where) {
  if (typeof schema.$ref === 'string') return refName(schema.$ref);
  if (Array.isArray(schema.oneOf)) {
    const inner = `${indent}  `;
    return schema.oneOf
      .map((variant) => ['', ...doc(variant.description, inner), `${inner}| ${typeOf(variant, inner, where)}`].join('\n'))
      .join('');
  }
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value) => (value === null ? 'null' : `'${String(value).replaceAll("'", "\\'")}'`)).join(' | ');
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.map((type) => scalar(type, schema, indent, where)).join(' | ');
}

/**
 * @param {unknown} type
 * @param {Schema} schema
 * @param {string} indent
 * @param {string} where
 * @returns {string}
 */
function scalar(type, schema, indent, where) {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${wrap(typeOf(schema.items ?? {}, indent, `${where}[]`))}[]`;
    case 'object':
      return schema.properties ? objectType(schema, indent, where) : 'Record<string, unknown>';
    default:
      throw new Error(`openapi.json: ${where} has a type this generator does not know: ${JSON.stringify(type)}`);
  }
}

/** @param {string} type */
function wrap(type) {
  return /^[A-Za-z]+$/.test(type) ? type : `(${type})`;
}

function main() {
  const document = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
  const generated = generate(document);
  const shown = relative(process.cwd(), OUTPUT);
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(OUTPUT, 'utf8');
    } catch {
      // A missing file is out of date too.
    }
    if (committed !== generated) {
      console.error(`${shown} is out of date with crates/nomos-http/openapi.json; run \`npm --prefix web run generate\` and commit it`);
      process.exit(1);
    }
    return;
  }
  writeFileSync(OUTPUT, generated);
  console.log(`wrote ${shown}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
