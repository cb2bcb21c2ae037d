/**
 * A time zone's wall clock and offsets, read from Intl, and where each wall
 * time falls: the DST rule of `schedule.ts` (a wall time that happens once
 * fires then; one a spring-forward gap skips, as late as the gap is long; one
 * the fall-back night repeats, at its first pass, or at both for a job that
 * names every hour). Pure: nothing here reads the clock.
 */

export const MINUTE = 60_000;
/** Offsets are sampled this far either side of a wall time to see a transition next to it. */
export const OFFSET_PROBE_MS = 36 * 3_600_000;

export interface Zone {
  /** The wall-clock time at an instant, encoded as a UTC instant (minute precision). */
  wallOf(instant: number): number;
  offsetAt(instant: number): number;
  /** How far the offset moves within a day and a half either side of an instant (0: a fixed offset there). */
  shiftNear(instant: number): number;
  /** The instants a wall time fires at, by the rule above (sorted; one, or two when everyHour). */
  instantsOf(wall: number, everyHour: boolean): number[];
}

const zones = new Map<string, Zone>();

export function zoneOf(tz: string): Zone {
  let zone = zones.get(tz);
  if (!zone) {
    zone = makeZone(tz);
    zones.set(tz, zone);
  }
  return zone;
}

function makeZone(tz: string): Zone {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    era: 'short',
  });
  const wallOf = (instant: number): number => {
    const p: Record<string, number> = {};
    let bc = false;
    for (const part of format.formatToParts(new Date(instant))) {
      if (part.type === 'era') bc = part.value === 'BC';
      else if (part.type !== 'literal') p[part.type] = Number(part.value);
    }
    // Date.UTC reads years 0-99 as 1900-1999, and Intl counts years before 1 AD down from 1 BC: a wall clock a
    // century or more off made every offset enormous, and finding a fire time walked back through the centuries.
    const wall = new Date(0);
    wall.setUTCFullYear(bc ? 1 - p.year! : p.year!, p.month! - 1, p.day!);
    return wall.setUTCHours(p.hour!, p.minute!, 0, 0);
  };
  // Offsets are whole minutes in every zone since 1970; seconds are dropped on both sides.
  const offsetAt = (instant: number) => wallOf(instant) - Math.floor(instant / MINUTE) * MINUTE;
  return {
    wallOf,
    offsetAt,
    shiftNear(instant) {
      const offsets = [offsetAt(instant - OFFSET_PROBE_MS), offsetAt(instant), offsetAt(instant + OFFSET_PROBE_MS)];
      return Math.max(...offsets) - Math.min(...offsets);
    },
    instantsOf(wall, everyHour) {
      const offsets = [...new Set([offsetAt(wall - OFFSET_PROBE_MS), offsetAt(wall), offsetAt(wall + OFFSET_PROBE_MS)])];
      if (offsets.length === 1) return [wall - offsets[0]!];
      const real = offsets.map((o) => wall - o).filter((i) => wallOf(i) === wall).sort((a, b) => a - b);
      if (real.length === 0) return [wall - Math.min(...offsets)]; // in a gap: moved forward by the gap's length
      return everyHour ? real : [real[0]!];
    },
  };
}
