// The Knowledge page's shapes: the wire types of entities, relations and entries, and an
// entity's attributes as rows for a table.

/** `GET /api/entities`. */
export interface EntityDto {
  slug: string;
  kind: string;
  name: string;
  attributes: Record<string, unknown>;
  updated_at: string;
}

/** `GET /api/entities/{slug}/relations`. */
export interface RelationDto {
  from: string;
  kind: string;
  to: string;
  created_at: string;
}

/** `GET /api/knowledge?q=`. */
export interface KnowledgeHitDto {
  key: string;
  title: string;
  content: string;
  tags: string[];
  about: string[];
  updated_at: string;
  rank: number;
}

/** An entity's attributes as `[name, text]` rows, sorted by name; nested values as JSON. */
export function attributeRows(attributes: Record<string, unknown> | null | undefined): [string, string][] {
  if (!attributes || typeof attributes !== 'object') return [];
  return Object.entries(attributes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]);
}

/** The entities matching a filter text (slug, name or kind), in slug order. */
export function filterEntities(entities: readonly EntityDto[], text: string): EntityDto[] {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return entities
    .filter((e) => words.every((w) => `${e.slug} ${e.name} ${e.kind}`.toLowerCase().includes(w)))
    .sort((a, b) => a.slug.localeCompare(b.slug));
}
