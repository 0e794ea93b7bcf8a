/**
 * The time zone in which a country's rate changes take effect: its capital's (a change "from
 * 1 August" applies from midnight there). Where a country spans several zones, the capital's is the
 * one its tax authority dates changes in.
 */
const ZONES: Record<string, string> = {
  at: 'Europe/Vienna',
  be: 'Europe/Brussels',
  bg: 'Europe/Sofia',
  ch: 'Europe/Zurich',
  cy: 'Asia/Nicosia',
  cz: 'Europe/Prague',
  de: 'Europe/Berlin',
  dk: 'Europe/Copenhagen',
  ee: 'Europe/Tallinn',
  es: 'Europe/Madrid',
  fi: 'Europe/Helsinki',
  fr: 'Europe/Paris',
  gb: 'Europe/London',
  gr: 'Europe/Athens',
  hr: 'Europe/Zagreb',
  hu: 'Europe/Budapest',
  ie: 'Europe/Dublin',
  is: 'Atlantic/Reykjavik',
  it: 'Europe/Rome',
  li: 'Europe/Vaduz',
  lt: 'Europe/Vilnius',
  lu: 'Europe/Luxembourg',
  lv: 'Europe/Riga',
  mt: 'Europe/Malta',
  nl: 'Europe/Amsterdam',
  no: 'Europe/Oslo',
  pl: 'Europe/Warsaw',
  pt: 'Europe/Lisbon',
  ro: 'Europe/Bucharest',
  rs: 'Europe/Belgrade',
  se: 'Europe/Stockholm',
  si: 'Europe/Ljubljana',
  sk: 'Europe/Bratislava',
  tr: 'Europe/Istanbul',
  xi: 'Europe/London',
};

/** The country's zone; UTC for a country not listed (a dataset row without one). */
export function timeZoneOf(country: string): string {
  return ZONES[country.toLowerCase()] ?? 'UTC';
}

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * A zone's calendar day at an instant, and how long that answer holds: until the zone's next
 * midnight, at most an hour (so a daylight-saving switch before midnight cannot make it late).
 */
export function dayInZone(zone: string, millis: number): { day: string; validUntil: number } {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(millis)) parts[p.type] = p.value;
  const day = `${parts.year}-${parts.month}-${parts.day}`;
  const elapsed =
    ((Number(parts.hour) * 60 + Number(parts.minute)) * 60 + Number(parts.second)) * 1000 + (millis % 1000);
  const untilMidnight = 86_400_000 - elapsed;
  return { day, validUntil: millis + Math.min(untilMidnight, 3_600_000) };
}
