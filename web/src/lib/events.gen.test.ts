// The generated event types are what the committed OpenAPI document generates, and list every kind.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCUMENT, eventKinds, generate, OUTPUT } from '../../scripts/wire-types.mjs';
import { EVENT_KINDS } from './events.gen';

const document = JSON.parse(readFileSync(DOCUMENT, 'utf8'));

describe('events.gen.ts', () => {
  it('is what crates/nomos-http/openapi.json generates (npm run generate rewrites it)', () => {
    expect(readFileSync(OUTPUT, 'utf8')).toBe(generate(document));
  });

  it('lists the type of every EventDto variant as a durable kind', () => {
    expect([...EVENT_KINDS]).toEqual(eventKinds(document.components.schemas));
    expect(EVENT_KINDS).toContain('turn.done');
  });

  it('refuses a schema shape it does not know, naming where', () => {
    const odd = { components: { schemas: { EventRecordDto: { type: 'object', properties: { x: { type: 'date' } } }, EventDto: { oneOf: [] } } } };
    expect(() => generate(odd)).toThrow(/EventRecordDto\.x/);
  });
});
