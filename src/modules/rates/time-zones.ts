/**
 * The time zone in which a country's rate changes take effect: its capital's (a change "from
 * 1 August" applies from midnight there). Where a country spans several zones, the capital's is the
 * one used, for the whole country and its regions: Canberra's (Australia/Sydney) for Australia,
 * Ottawa's (America/Toronto) for Canada and its HST provinces, Mexico City's, Jakarta's, Santiago's.
 */
import { wallDate, zoneWallTime } from '../../lib/dates.js';

const ZONES: Record<string, string> = {
  ae: 'Asia/Dubai',
  am: 'Asia/Yerevan',
  at: 'Europe/Vienna',
  au: 'Australia/Sydney',
  ba: 'Europe/Sarajevo',
  be: 'Europe/Brussels',
  bg: 'Europe/Sofia',
  bh: 'Asia/Bahrain',
  ca: 'America/Toronto',
  ch: 'Europe/Zurich',
  cl: 'America/Santiago',
  cn: 'Asia/Shanghai',
  co: 'America/Bogota',
  cy: 'Asia/Nicosia',
  cz: 'Europe/Prague',
  de: 'Europe/Berlin',
  dk: 'Europe/Copenhagen',
  ee: 'Europe/Tallinn',
  eg: 'Africa/Cairo',
  es: 'Europe/Madrid',
  fi: 'Europe/Helsinki',
  fr: 'Europe/Paris',
  gb: 'Europe/London',
  ge: 'Asia/Tbilisi',
  gr: 'Europe/Athens',
  hr: 'Europe/Zagreb',
  hu: 'Europe/Budapest',
  id: 'Asia/Jakarta',
  ie: 'Europe/Dublin',
  il: 'Asia/Jerusalem',
  in: 'Asia/Kolkata',
  is: 'Atlantic/Reykjavik',
  it: 'Europe/Rome',
  jp: 'Asia/Tokyo',
  ke: 'Africa/Nairobi',
  kr: 'Asia/Seoul',
  li: 'Europe/Vaduz',
  lt: 'Europe/Vilnius',
  lu: 'Europe/Luxembourg',
  lv: 'Europe/Riga',
  mt: 'Europe/Malta',
  mx: 'America/Mexico_City',
  my: 'Asia/Kuala_Lumpur',
  nl: 'Europe/Amsterdam',
  no: 'Europe/Oslo',
  nz: 'Pacific/Auckland',
  om: 'Asia/Muscat',
  ph: 'Asia/Manila',
  pl: 'Europe/Warsaw',
  pt: 'Europe/Lisbon',
  ro: 'Europe/Bucharest',
  rs: 'Europe/Belgrade',
  sa: 'Asia/Riyadh',
  se: 'Europe/Stockholm',
  sg: 'Asia/Singapore',
  si: 'Europe/Ljubljana',
  sk: 'Europe/Bratislava',
  th: 'Asia/Bangkok',
  tr: 'Europe/Istanbul',
  tw: 'Asia/Taipei',
  ua: 'Europe/Kyiv',
  vn: 'Asia/Ho_Chi_Minh',
  xi: 'Europe/London',
  za: 'Africa/Johannesburg',
};

/** The country's zone; UTC for a country not listed (a dataset row without one). */
export function timeZoneOf(country: string): string {
  return ZONES[country.toLowerCase()] ?? 'UTC';
}

/**
 * A zone's calendar day at an instant, and how long that answer holds: until the zone's next
 * midnight, at most an hour (so a daylight-saving switch before midnight cannot make it late).
 */
export function dayInZone(zone: string, millis: number): { day: string; validUntil: number } {
  const wall = zoneWallTime(zone, millis);
  const day = wallDate(wall);
  const elapsed = ((wall.hour * 60 + wall.minute) * 60 + wall.second) * 1000 + (millis % 1000);
  const untilMidnight = 86_400_000 - elapsed;
  return { day, validUntil: millis + Math.min(untilMidnight, 3_600_000) };
}
