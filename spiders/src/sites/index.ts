import { boss, BOSS_CITIES } from "./boss.ts";
import { qcwy, QCWY_CITIES } from "./qcwy.ts";
import type { SiteAdapter, SiteId } from "./site.ts";
import { zhilian, ZHILIAN_CITIES } from "./zhilian.ts";

export const SITE_ADAPTERS: Record<SiteId, SiteAdapter> = { boss, qcwy, zhilian };
export const SITE_IDS = Object.keys(SITE_ADAPTERS) as SiteId[];

const CITY_CODES: Record<SiteId, Record<string, string>> = { boss: BOSS_CITIES, qcwy: QCWY_CITIES, zhilian: ZHILIAN_CITIES };

/** The city as a site's request carries it: its code when known, else the name itself. */
export const cityCode = (site: SiteId, city: string) => CITY_CODES[site][city] ?? city;
