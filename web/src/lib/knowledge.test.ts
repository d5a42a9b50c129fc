// Unit tests of the Knowledge page's shapes.
import { describe, expect, it } from 'vitest';
import { attributeRows, filterEntities, type EntityDto } from './knowledge';

const entity = (slug: string, name: string, kind = 'host'): EntityDto => ({ slug, name, kind, attributes: {}, updated_at: '' });

describe('attributeRows', () => {
  it('sorts attributes by name and shows nested values as JSON', () => {
    expect(attributeRows({ os: 'debian', disks: ['sda', 'sdb'], cpu: 4, ok: true })).toEqual([
      ['cpu', '4'],
      ['disks', '["sda","sdb"]'],
      ['ok', 'true'],
      ['os', 'debian'],
    ]);
    expect(attributeRows(null)).toEqual([]);
  });
});

describe('filterEntities', () => {
  it('keeps entities whose slug, name or kind hold every word', () => {
    const all = [entity('web1', 'Web server'), entity('db1', 'Database', 'lxc'), entity('local', 'This machine')];
    expect(filterEntities(all, '').map((e) => e.slug)).toEqual(['db1', 'local', 'web1']);
    expect(filterEntities(all, 'LXC').map((e) => e.slug)).toEqual(['db1']);
    expect(filterEntities(all, 'web server').map((e) => e.slug)).toEqual(['web1']);
  });
});
