import { boss } from "./boss.ts";
import { qcwy } from "./qcwy.ts";
import type { SiteAdapter, SiteId } from "./site.ts";
import { zhilian } from "./zhilian.ts";

export const SITE_ADAPTERS: Record<SiteId, SiteAdapter> = { boss, qcwy, zhilian };
export const SITE_IDS = Object.keys(SITE_ADAPTERS) as SiteId[];
