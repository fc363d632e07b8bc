/**
 * Saved filters (spec part 3 "Shared log-feed rules", filter creation errors), one module for
 * every feed: the syslog, Windows and IDS feeds here, flows later (`SavedFilters` with the feed's
 * name and keys). Validation gives the spec's exact failures, in this order:
 *   label missing, not text, or over 255 -> 422 {label: [...]}
 *   filter missing or empty ('' or {}) -> 422 {error: 'Filter cannot be empty.'}
 *   filter not a JSON object (string) -> 422 {error: 'Filter must be a JSON object.'}
 *   a key outside the feed's allowed keys, or a value the key cannot take
 *     -> 422 {error: 'Filter contains invalid criteria: <key>'}
 *   no key carries a value -> 422 {error: 'Filter must have at least one criterion with a value.'}
 *   id not an own filter of this feed -> 403 {message: 'Filter not found or access denied.'}
 */
import type { DB } from '../../platform/db/database.js';
import type { Clock } from '../../platform/time/time.js';
import { toIso } from '../../platform/time/time.js';
import {
  criteriaOf,
  FEEDS,
  FilterError,
  isBlank,
  type Criteria,
  type Feed,
  type FeedDefinition,
} from './log-feeds.rules.js';
import {
  deleteSavedFilter,
  enabledSavedFilters,
  insertSavedFilter,
  listSavedFilters,
  ownSavedFilter,
  toggleSavedFilter,
  updateSavedFilter,
  type SavedFilterFeed,
  type SavedFilterRow,
} from './saved-filters.repository.js';

export const FILTER_DENIED = 'Filter not found or access denied.';
export const FILTER_EMPTY = 'Filter cannot be empty.';
export const FILTER_NOT_OBJECT = 'Filter must be a JSON object.';
export const FILTER_NO_VALUE = 'Filter must have at least one criterion with a value.';
export const LABEL_MAX = 255;

export interface SavedFilterRecord {
  id: number;
  users_id: number;
  label: string;
  filter: Record<string, unknown>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

/** A failure of a saved-filter request: the HTTP status and the body the spec gives. */
export class SavedFilterFailure extends Error {
  constructor(
    readonly status: 403 | 404 | 422,
    readonly body: Record<string, unknown>,
  ) {
    super(JSON.stringify(body));
  }
}

const parseObject = (text: string): Record<string, unknown> => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
};

export class SavedFilters {
  constructor(
    private readonly db: DB,
    private readonly clock: Clock,
    readonly feed: SavedFilterFeed,
    /** Validates one filter object into criteria (throws FilterError naming the key). */
    private readonly validate: (filter: Record<string, unknown>) => Criteria,
    readonly allowedKeys: readonly string[],
  ) {}

  /** The saved filters of a log feed (syslog, eventlog, eve). */
  static forFeed(db: DB, clock: Clock, feed: Feed): SavedFilters {
    const definition: FeedDefinition = FEEDS[feed];
    return new SavedFilters(
      db,
      clock,
      feed,
      (filter) => criteriaOf(definition, filter, definition.savedKeys),
      definition.savedKeys,
    );
  }

  record(row: SavedFilterRow): SavedFilterRecord {
    return {
      id: row.id,
      users_id: row.users_id,
      label: row.label,
      filter: parseObject(row.filter),
      enabled: row.enabled === 1,
      created_at: toIso(row.created_at),
      updated_at: toIso(row.updated_at),
    };
  }

  list(userId: number): SavedFilterRecord[] {
    return listSavedFilters(this.db, userId, this.feed).map((row) => this.record(row));
  }

  /** The owner's enabled filters as criteria (a stored filter that no longer reads is skipped). */
  exclusions(userId: number): Criteria[] {
    const out: Criteria[] = [];
    for (const row of enabledSavedFilters(this.db, userId, this.feed)) {
      try {
        out.push(this.validate(parseObject(row.filter)));
      } catch {
        // Keys are checked when saved; a filter unreadable now excludes nothing.
      }
    }
    return out;
  }

  /** Creates (201) or updates an own filter (200); throws SavedFilterFailure. */
  save(
    userId: number,
    body: Record<string, unknown>,
  ): { created: boolean; filter: SavedFilterRecord } {
    const label = body.label;
    if (label === undefined || label === null || (typeof label === 'string' && label.trim() === ''))
      throw new SavedFilterFailure(422, { label: ['The label field is required.'] });
    if (typeof label !== 'string')
      throw new SavedFilterFailure(422, { label: ['The label field must be a string.'] });
    if (label.length > LABEL_MAX)
      throw new SavedFilterFailure(422, {
        label: [`The label field must not be greater than ${LABEL_MAX} characters.`],
      });
    const object = this.filterObject(body.filter);
    const now = this.clock.now();
    const text = JSON.stringify(object);
    if (body.id !== undefined && body.id !== null && body.id !== '') {
      const id = Number(body.id);
      const own = Number.isSafeInteger(id)
        ? ownSavedFilter(this.db, userId, this.feed, id)
        : undefined;
      if (!own) throw new SavedFilterFailure(403, { message: FILTER_DENIED });
      updateSavedFilter(this.db, id, { label, filter: text, now });
      return {
        created: false,
        filter: this.record(ownSavedFilter(this.db, userId, this.feed, id)!),
      };
    }
    const id = insertSavedFilter(this.db, { userId, feed: this.feed, label, filter: text, now });
    return { created: true, filter: this.record(ownSavedFilter(this.db, userId, this.feed, id)!) };
  }

  toggle(userId: number, id: number): SavedFilterRecord[] {
    if (!ownSavedFilter(this.db, userId, this.feed, id))
      throw new SavedFilterFailure(404, { error: FILTER_DENIED });
    toggleSavedFilter(this.db, id, this.clock.now());
    return this.list(userId);
  }

  delete(userId: number, id: number): void {
    if (!ownSavedFilter(this.db, userId, this.feed, id))
      throw new SavedFilterFailure(404, { message: FILTER_DENIED });
    deleteSavedFilter(this.db, id);
  }

  private filterObject(value: unknown): Record<string, unknown> {
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
      throw new SavedFilterFailure(422, { error: FILTER_EMPTY });
    let object: unknown = value;
    if (typeof value === 'string') {
      try {
        object = JSON.parse(value);
      } catch {
        throw new SavedFilterFailure(422, { error: FILTER_NOT_OBJECT });
      }
    }
    if (object === null || typeof object !== 'object' || Array.isArray(object))
      throw new SavedFilterFailure(422, { error: FILTER_NOT_OBJECT });
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 0) throw new SavedFilterFailure(422, { error: FILTER_EMPTY });
    for (const key of keys)
      if (!this.allowedKeys.includes(key))
        throw new SavedFilterFailure(422, { error: `Filter contains invalid criteria: ${key}` });
    try {
      this.validate(record);
    } catch (err) {
      if (err instanceof FilterError)
        throw new SavedFilterFailure(422, {
          error: `Filter contains invalid criteria: ${err.key ?? keys[0]}`,
        });
      throw err;
    }
    if (keys.every((key) => isBlank(record[key])))
      throw new SavedFilterFailure(422, { error: FILTER_NO_VALUE });
    return record;
  }
}
