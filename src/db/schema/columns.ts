import type { ColumnType } from 'kysely';

/** Column helpers of the schema files (src/db/schema/*.ts). */

/** Columns with a database default: optional on insert. */
export type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** Timestamps come back as Date and may be written as Date or ISO text. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type Json<T> = ColumnType<T, string | T, string | T>;
export type DefaultedJson<T> = ColumnType<T, string | T | undefined, string | T>;
