"use strict";
// Compatibility dates and flags, with workerd's names and meanings. `lib/compat-flags.json` is
// workerd's table of features (enable flag, disable flag, enable date, experimental or not, and
// "implied by after date" rules); this file checks a worker's `compatibilityDate` and
// `compatibilityFlags` against it and works out which features are on, as workerd does: a
// feature is on from its enable date, or when its enable flag is given; its disable flag turns
// it off again. A feature with `impliedBy: { flags, date }` is also on when the date is on or
// after `date` and any of `flags` is on (unless its own disable flag is given): e.g.
// `nodejs_compat` with a date from 2024-09-23 brings `nodejs_compat_v2`. As in workerd, these
// rules are applied once, in table order, so a rule sees the rules above it already applied.

const TABLE = require("./compat-flags.json");

/** The date workerbox uses when none is given: the newest behaviour its flag table knows. */
const DEFAULT_DATE = TABLE.latestDate;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const byFlag = new Map();
for (const feature of TABLE.flags) {
  if (feature.enable) byFlag.set(feature.enable, { feature, enables: true });
  if (feature.disable) byFlag.set(feature.disable, { feature, enables: false });
}

/** Today's date in UTC, as YYYY-MM-DD. */
function today() {
  return new Date().toISOString().slice(0, 10);
}

function checkDate(date, where) {
  if (typeof date !== "string") {
    throw new TypeError(`${where}: compatibilityDate must be a "YYYY-MM-DD" string, got ${date === null ? "null" : typeof date}`);
  }
  const match = DATE.exec(date);
  const parsed = match ? new Date(`${date}T00:00:00Z`) : null;
  const valid = parsed !== null && !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date;
  if (!valid) throw new TypeError(`${where}: compatibilityDate ${JSON.stringify(date)} is not a valid date in the form YYYY-MM-DD`);
  if (date > today()) throw new TypeError(`${where}: compatibilityDate ${date} is in the future (today is ${today()} UTC)`);
  return date;
}

/**
 * Validates `compatibilityDate` and `compatibilityFlags` (either may be undefined) and returns
 * `{ date, flags, enabled }`: the date used, the flags given, and the enable-flag names of every
 * feature that is on. Bad input is a TypeError naming the value and, for an unknown flag, the
 * known ones. An experimental flag (workerd's --experimental) is refused unless `experimental`
 * (createWorker's unsafeExperimental); its feature is then on only when its flag is given.
 */
function resolveCompat(compatibilityDate, compatibilityFlags, where = "createWorker", { experimental = false } = {}) {
  const date = compatibilityDate === undefined ? DEFAULT_DATE : checkDate(compatibilityDate, where);
  if (compatibilityFlags !== undefined && (!Array.isArray(compatibilityFlags) || compatibilityFlags.some((f) => typeof f !== "string"))) {
    throw new TypeError(`${where}: compatibilityFlags must be an array of flag names such as ["nodejs_compat"]`);
  }
  const flags = [...new Set(compatibilityFlags ?? [])];
  const chosen = new Map(); // feature -> enables?
  for (const flag of flags) {
    const entry = byFlag.get(flag);
    if (entry === undefined) {
      const known = [...byFlag.keys()].filter((name) => !byFlag.get(name).feature.experimental).sort();
      throw new TypeError(`${where}: unknown compatibility flag "${flag}". Known flags: ${known.join(", ")}`);
    }
    if (entry.feature.experimental && !experimental) {
      throw new TypeError(`${where}: compatibility flag "${flag}" is experimental in workerd (it needs workerd's --experimental); pass unsafeExperimental: true to createWorker to accept experimental flags`);
    }
    if (chosen.has(entry.feature) && chosen.get(entry.feature) !== entry.enables) {
      const { enable, disable } = entry.feature;
      throw new TypeError(`${where}: compatibility flags "${enable}" and "${disable}" contradict each other`);
    }
    chosen.set(entry.feature, entry.enables);
  }
  const on = new Map(); // enable flag -> on?
  for (const feature of TABLE.flags) {
    // An experimental feature is on only when its flag is given (with unsafeExperimental).
    if (!feature.enable || (feature.experimental && !chosen.has(feature))) continue;
    const byDate = feature.date !== null && date >= feature.date;
    on.set(feature.enable, chosen.has(feature) ? chosen.get(feature) : byDate);
  }
  for (const feature of TABLE.flags) {
    const rule = feature.impliedBy;
    if (!rule || !on.has(feature.enable) || chosen.get(feature) === false || date < rule.date) continue;
    if (rule.flags.some((flag) => on.get(flag))) on.set(feature.enable, true);
  }
  const enabled = [...on].filter(([, value]) => value).map(([flag]) => flag);
  // Asking for nodejs_compat_v2 by name implies nodejs_compat; v2 on by date alone does not.
  if (flags.includes("nodejs_compat_v2") && !enabled.includes("nodejs_compat")) enabled.push("nodejs_compat");
  // The known features that are off: with `enabled`, the keys of the worker's Cloudflare.compatibilityFlags.
  const off = [...on].filter(([flag, value]) => !value && !enabled.includes(flag)).map(([flag]) => flag);
  return { date, flags, enabled, off };
}

module.exports = { resolveCompat, DEFAULT_DATE };
